import { invalidArgument } from '@ledgerline/errors';
import { CursorCodecReason } from './errors.js';

/**
 * The data path's per-request bounds in one table, read by every layer that
 * handles the request (the wire mapping that enforces them, subscriptions and
 * the managed cursor that rely on them), so no layer carries a cap another
 * one makes unreachable. A request past one is refused at the wire, whole,
 * before any of it is applied. Bounds that are settings (a topic's pending
 * bytes, the append queue, reads per store call) stay with their settings and
 * their ceilings; this table holds what a single request may carry.
 */
export const DATA_PATH_LIMITS = Object.freeze({
  /**
   * Entries one Ack may acknowledge individually, a single position counting
   * one and a range its length (checkEntryAcks says why); also the positions
   * of one Nack. In entries.
   */
  maxAckPositionsPerCall: 10_000,
  /** Batch-index acks one Ack may carry, in entries. */
  maxBatchIndexAcksPerCall: 10_000,
  /** Entries one ConsumeResponse carries at most (also bounded by Subscribe.max_entries_per_response), in entries. */
  maxEntriesPerConsumeResponse: 1_000,
  /** Bytes one ConsumeResponse carries at most (well under gRPC's 4 MiB message limit), in bytes. */
  maxConsumeResponseBytes: 1024 * 1024,
  /** Messages one PublishRequest may carry, the writer owner's default (`maxMessagesPerPublishRequest`), in messages. */
  defaultMaxMessagesPerPublishRequest: 1_000,
  /** The most `maxMessagesPerPublishRequest` may be set to, in messages. */
  maxMessagesPerPublishRequestCeiling: 10_000,
});

export type DataPathLimit = keyof typeof DATA_PATH_LIMITS;

/**
 * Refuses a request carrying more than a limit allows: INVALID_ARGUMENT
 * LIMIT_EXCEEDED, naming the limit, its value and what was sent (also in
 * details, for programs).
 */
export function checkWithinLimit(limit: DataPathLimit, sent: number, what: string): void {
  const max = DATA_PATH_LIMITS[limit];
  if (sent <= max) return;
  throw invalidArgument(CursorCodecReason.LIMIT_EXCEEDED, `${what} carries ${sent}; ${limit} is ${max}`, {
    limit,
    max: String(max),
    sent: String(sent),
  });
}
