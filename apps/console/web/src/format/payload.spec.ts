import { defaultView, payloadAsHex, payloadAsJson, payloadAsText } from './payload';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('how the message browser shows a payload', () => {
  it('pretty-prints JSON, and says when a payload is not JSON', () => {
    expect(payloadAsJson(bytes('{"order":3,"lines":[1,2]}'))).toBe(
      '{\n  "order": 3,\n  "lines": [\n    1,\n    2\n  ]\n}',
    );
    expect(payloadAsJson(bytes('order 3'))).toBeUndefined();
  });

  it('dumps hex sixteen bytes a line with their offset and printable characters', () => {
    const dump = payloadAsHex(new Uint8Array([...bytes('{"order":3}'), 0, 255, 10, 65, 66, 67, 68, 69, 70]));
    expect(dump.split('\n')).toEqual([
      '00000000  7b 22 6f 72 64 65 72 22 3a 33 7d 00 ff 0a 41 42  {"order":3}...AB',
      '00000010  43 44 45 46                                      CDEF',
    ]);
    expect(payloadAsHex(new Uint8Array())).toBe('');
  });

  it('opens JSON as JSON, UTF-8 as text and anything else as hex', () => {
    expect(defaultView(bytes('[1, 2]'))).toBe('json');
    expect(defaultView(bytes('grüße'))).toBe('text');
    expect(payloadAsText(bytes('grüße'))).toBe('grüße');
    expect(defaultView(new Uint8Array([0xc3, 0x28, 0xff]))).toBe('hex');
  });
});
