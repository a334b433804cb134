import type { LedgerlineClient } from '@ledgerline/client';

/** One acknowledged send: what it carried, where it was stored, when, and how long it took. */
export interface Ack {
  payload: string;
  /** -1n when the owner answered that it had stored the payload already (a resend after a failover). */
  offset: bigint;
  duplicate: boolean;
  atMs: number;
  /** From the send to its acknowledgement. */
  latencyMs: number;
}

/**
 * Reads `topic` from offset 0 and checks it against the acknowledgements:
 * offsets contiguous from 0, nothing stored twice, every acknowledged payload
 * stored at the offset it was acknowledged at. Returns what is wrong (empty
 * when nothing is, at most 20 lines) so a test shows all of it.
 */
export async function checkStoredAgainstAcks(
  client: LedgerlineClient,
  topic: string,
  acks: readonly Ack[],
): Promise<string[]> {
  const problems: string[] = [];
  const [stats] = await client.topicStats(topic);
  const stored = Number(stats!.stats.nextOffset);
  const reader = await client.reader({ topic, start: 'earliest' });
  const offsetOf = new Map<string, bigint>();
  try {
    for (let index = 0; index < stored; index++) {
      const message = await reader.readNext();
      const payload = Buffer.from(message.payload).toString();
      if (message.offset !== BigInt(index)) problems.push(`offset ${message.offset} where ${index} was next`);
      if (offsetOf.has(payload))
        problems.push(`${payload} stored twice (offsets ${offsetOf.get(payload)} and ${message.offset})`);
      offsetOf.set(payload, message.offset);
    }
  } finally {
    await reader.close();
  }
  for (const ack of acks) {
    const offset = offsetOf.get(ack.payload);
    if (offset === undefined) problems.push(`${ack.payload} acknowledged at offset ${ack.offset} and lost`);
    // An owner that took over knows a resend is a duplicate but not always where the original went (-1).
    else if (offset !== ack.offset && !(ack.duplicate && ack.offset === -1n))
      problems.push(`${ack.payload} acknowledged at offset ${ack.offset}, stored at ${offset}`);
  }
  return problems.slice(0, 20);
}
