// The three ways the message browser shows a payload. Pure functions so the
// browser view stays a thin switch over them.

export type PayloadView = 'text' | 'json' | 'hex';

const utf8 = new TextDecoder('utf-8', { fatal: false });

export function payloadAsText(payload: Uint8Array): string {
  return utf8.decode(payload);
}

/** Pretty-printed JSON, or undefined when the payload is not JSON. */
export function payloadAsJson(payload: Uint8Array): string | undefined {
  try {
    return JSON.stringify(JSON.parse(utf8.decode(payload)), null, 2);
  } catch {
    return undefined;
  }
}

/** A hex dump: offset, 16 bytes in hex, the printable ASCII of those bytes. */
export function payloadAsHex(payload: Uint8Array): string {
  const lines: string[] = [];
  for (let start = 0; start < payload.length; start += 16) {
    const row = payload.subarray(start, start + 16);
    const hex = Array.from(row, (byte) => byte.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (byte) => (byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : '.')).join('');
    lines.push(`${start.toString(16).padStart(8, '0')}  ${hex.padEnd(47, ' ')}  ${ascii}`);
  }
  return lines.join('\n');
}

/** The view a payload opens in: JSON when it parses as JSON, text when it is valid UTF-8, else hex. */
export function defaultView(payload: Uint8Array): PayloadView {
  if (payloadAsJson(payload) !== undefined) return 'json';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(payload);
    return 'text';
  } catch {
    return 'hex';
  }
}
