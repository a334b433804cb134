import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from './reasons.js';

/** Where a lookup by offset landed: the fields of a FindPosition answer that tell a trimmed offset. */
export interface OffsetLanding {
  /** The offset of the message found: the first retained one when the offset was below it. */
  readonly offset: number | bigint;
  /** The offset was below the first retained message. */
  readonly beforeEarliest: boolean;
  /** The offset was past the last message (also when retention kept none at all). */
  readonly pastEnd: boolean;
}

/**
 * Refuses a fetch by offset that retention already trimmed, at once, as
 * Kafka's fetch does with OFFSET_OUT_OF_RANGE: answering from the first
 * retained message would hand a reader a gap it never hears of, and a topic
 * whose retained ledgers hold no message would leave it asking for the same
 * offset forever. The refusal names the earliest retained offset, so the
 * caller chooses to start there or to stop. When nothing is retained, the
 * earliest offset is the end: the next message written gets it.
 */
export function refuseTrimmedOffset(topic: string, offset: bigint, landing: OffsetLanding): void {
  const earliest = BigInt(landing.offset);
  const trimmed = landing.beforeEarliest || (landing.pastEnd && offset < earliest);
  if (!trimmed) return;
  throw new LedgerlineError(
    'OUT_OF_RANGE',
    OwnerReason.OFFSET_TRIMMED,
    `offset ${offset} of ${topic} was removed by retention: the earliest retained offset is ${earliest};` +
      ` read from there (or from the earliest)`,
    { details: { topic, offset: offset.toString(), earliest_offset: earliest.toString() } },
  );
}
