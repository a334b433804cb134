import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import { decodeLocalName, encodeLocalName } from './url-codec.js';
import { expectNamingError } from './testing/naming-expectations.js';

// Computed with java.net.URLEncoder.encode(s, UTF_8) on OpenJDK 17.
const JAVA_ENCODINGS: Array<[string, string]> = [
  ['', ''],
  ['hello', 'hello'],
  ['DESIGNING WORKHOUSES', 'DESIGNING+WORKHOUSES'],
  ['a b*c~d$e/f%g', 'a+b*c%7Ed%24e%2Ff%25g'],
  ['+ .-_*', '%2B+.-_*'],
  ['caf\u00e9', 'caf%C3%A9'],
  ['\u65e5\u672c\u8a9e', '%E6%97%A5%E6%9C%AC%E8%AA%9E'],
  ['\u{1F600}', '%F0%9F%98%80'],
  ['emoji-\u{1F44D}\u{1F3FD}', 'emoji-%F0%9F%91%8D%F0%9F%8F%BD'],
  ['\u0000', '%00'],
  ['\uffff\uffff\uffff', '%EF%BF%BF%EF%BF%BF%EF%BF%BF'],
  ['\u00ff\u0100\u07ff\u0800', '%C3%BF%C4%80%DF%BF%E0%A0%80'],
  ['\u0100\u{1D11E}z', '%C4%80%F0%9D%84%9Ez'],
  ['\ufeffbom', '%EF%BB%BFbom'],
  ['The quick brown fox', 'The+quick+brown+fox'],
];

// An independent model of URLEncoder built on encodeURIComponent, which leaves
// !'()~ unencoded where Java encodes them and writes %20 where Java writes +.
function referenceEncode(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()~]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

// Well-formed strings over all of Unicode, weighted towards the characters that encode specially.
const wellFormed = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom(' ', '+', '%', '$', '/', '*', '~', '.', '-', '_', 'a', '\u00e9', '\u{1F600}') }),
);
const anyUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) });

function expectOnlyInvalidArgument(run: () => unknown): void {
  try {
    run();
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(LedgerlineError);
    expect((thrown as LedgerlineError).code).toBe('INVALID_ARGUMENT');
  }
}

describe('encodeLocalName', () => {
  it.each(JAVA_ENCODINGS)('encodes %j as Java does', (value, encoded) => {
    expect(encodeLocalName(value)).toBe(encoded);
  });

  it('keeps letters, digits and .-*_ and nothing else of ASCII', () => {
    for (let unit = 0; unit < 0x80; unit++) {
      const char = String.fromCharCode(unit);
      const kept = /[A-Za-z0-9.*_-]/.test(char);
      const expected = kept ? char : char === ' ' ? '+' : `%${unit.toString(16).toUpperCase().padStart(2, '0')}`;
      expect(encodeLocalName(char)).toBe(expected);
    }
  });

  it('agrees with an encodeURIComponent model on well-formed strings', () => {
    fc.assert(
      fc.property(wellFormed, (value) => {
        expect(encodeLocalName(value)).toBe(referenceEncode(value));
      }),
      { numRuns: 300 },
    );
  });

  it.each(['\ud800', 'a\udc00b', '\ude00\ud83d', 'x\udbff'])('rejects the lone surrogate in %j', (value) => {
    expectNamingError(() => encodeLocalName(value), 'INVALID_TOPIC_NAME');
  });
});

describe('decodeLocalName', () => {
  it.each(JAVA_ENCODINGS)('decodes the Java encoding of %j', (value, encoded) => {
    expect(decodeLocalName(encoded)).toBe(value);
  });

  it('decodes as URLDecoder does: + is a space, hex is either case, other characters stand for themselves', () => {
    // java.net.URLDecoder.decode("a+b%2Bc%e2%82%ac*~", UTF_8) on OpenJDK 17.
    expect(decodeLocalName('a+b%2Bc%e2%82%ac*~')).toBe('a b+c\u20ac*~');
    expect(decodeLocalName('\u00e9$/')).toBe('\u00e9$/');
    expect(decodeLocalName('%EF%BB%BF')).toBe('\ufeff');
  });

  it.each(['%', '%4', 'a%zz', '%%41', '%-1', '%C3', '%C3%', '%FF', '%ED%A0%80', '%C0%AF', '%F4%90%80%80'])(
    'rejects the bad escape or non-UTF-8 bytes in %j',
    (encoded) => {
      expectNamingError(() => decodeLocalName(encoded), 'INVALID_ENCODED_NAME');
    },
  );

  it('inverts encodeLocalName on every well-formed string', () => {
    fc.assert(
      fc.property(wellFormed, (value) => {
        expect(decodeLocalName(encodeLocalName(value))).toBe(value);
      }),
      { numRuns: 300 },
    );
  });

  it('only ever throws INVALID_ARGUMENT on arbitrary input', () => {
    fc.assert(
      fc.property(
        fc.oneof(anyUnits, fc.string({ unit: fc.constantFrom('%', 'A', 'f', '8', 'C', '+', 'z') })),
        (value) => {
          expectOnlyInvalidArgument(() => encodeLocalName(value));
          expectOnlyInvalidArgument(() => decodeLocalName(value));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects what is not a string', () => {
    expectNamingError(() => decodeLocalName(42 as unknown as string), 'INVALID_ENCODED_NAME');
    expectNamingError(() => encodeLocalName(undefined as unknown as string), 'INVALID_TOPIC_NAME');
  });
});

describe('long inputs', () => {
  it('decodes a very long run of escapes', () => {
    const value = 'A'.repeat(300_000);
    expect(decodeLocalName('%41'.repeat(300_000))).toBe(value);
    expect(decodeLocalName(encodeLocalName('\u00e9'.repeat(100_000)))).toBe('\u00e9'.repeat(100_000));
  });
});
