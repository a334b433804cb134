import type { Message, Reader } from '@ledgerline/client';

/** The next `count` messages of a reader, in order (the specs bound the wait by their own timeout). */
export async function take(reader: Reader, count: number): Promise<Message[]> {
  const got: Message[] = [];
  for await (const message of reader) {
    got.push(message);
    if (got.length === count) break;
  }
  return got;
}
