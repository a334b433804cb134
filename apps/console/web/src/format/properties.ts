/**
 * Message properties typed one `name=value` per line: the first `=` splits,
 * blank lines and lines without a name are left out, a later name wins.
 */
export function parseProperties(text: string): Record<string, string> {
  const properties: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) properties[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return properties;
}
