import {
  MAX_BATCH_SIZE,
  checkEntryAcks,
  checkEntryPosition,
  checkWithinLimit,
  type CheckedEntryRange,
  type EntryPosition,
} from '@ledgerline/cursor-codec';
import { invalidArgument } from '@ledgerline/errors';
import { badConsumerOption, SubscriptionReason } from './errors.js';
import {
  DEFAULT_NACK_REDELIVERY_DELAY_MS,
  MAX_AVAILABLE_PERMITS,
  MAX_CONSUMER_NAME_LENGTH,
  MAX_DEAD_LETTER_REDELIVERIES,
  MAX_REDELIVERY_DELAY_MS,
  MIN_ACK_TIMEOUT_MS,
} from './limits.js';
import type { ResolvedConsumerOptions } from './consumer-state.js';
import { SubscriptionType, type ConsumerOptions, type DeadLetterPolicy, type DispatchEntry } from './types.js';

const TYPES = new Set<string>(Object.values(SubscriptionType));

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** Checks what a client asked for on Subscribe; INVALID_ARGUMENT for anything out of bounds. */
export function resolveConsumerOptions<E extends DispatchEntry>(
  options: ConsumerOptions<E>,
): ResolvedConsumerOptions<E> {
  const { name, type, sink } = options;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_CONSUMER_NAME_LENGTH) {
    throw badConsumerOption(`a consumer name is 1 to ${MAX_CONSUMER_NAME_LENGTH} characters`);
  }
  if (!TYPES.has(type)) {
    throw invalidArgument(
      SubscriptionReason.INVALID_SUBSCRIPTION_TYPE,
      `subscription type must be one of ${[...TYPES].join(', ')}, got ${String(type)}`,
    );
  }
  if (typeof sink !== 'object' || sink === null) throw badConsumerOption('a consumer needs a sink');
  const priorityLevel = options.priorityLevel ?? 0;
  if (!isIntegerIn(priorityLevel, 0, 2 ** 31 - 1)) throw badConsumerOption('priorityLevel is an integer >= 0');
  const ackTimeoutMs = options.ackTimeoutMs ?? 0;
  if (ackTimeoutMs !== 0 && !isIntegerIn(ackTimeoutMs, MIN_ACK_TIMEOUT_MS, MAX_REDELIVERY_DELAY_MS)) {
    throw badConsumerOption(`ackTimeoutMs is 0 (none) or ${MIN_ACK_TIMEOUT_MS} to ${MAX_REDELIVERY_DELAY_MS} ms`);
  }
  const nackRedeliveryDelayMs = options.nackRedeliveryDelayMs ?? DEFAULT_NACK_REDELIVERY_DELAY_MS;
  if (!isIntegerIn(nackRedeliveryDelayMs, 0, MAX_REDELIVERY_DELAY_MS)) {
    throw badConsumerOption(`nackRedeliveryDelayMs is 0 to ${MAX_REDELIVERY_DELAY_MS} ms`);
  }
  return {
    name,
    type,
    sink,
    priorityLevel,
    ackTimeoutMs,
    nackRedeliveryDelayMs,
    deadLetterPolicy: checkDeadLetterPolicy(options.deadLetterPolicy),
  };
}

function checkDeadLetterPolicy(policy: DeadLetterPolicy | undefined): DeadLetterPolicy | undefined {
  if (policy === undefined || policy.maxRedeliveries === 0) return undefined;
  if (!isIntegerIn(policy.maxRedeliveries, 0, MAX_DEAD_LETTER_REDELIVERIES)) {
    throw badConsumerOption(`deadLetterPolicy.maxRedeliveries is 0 (never) to ${MAX_DEAD_LETTER_REDELIVERIES}`);
  }
  if (policy.topic !== undefined && typeof policy.topic !== 'string') {
    throw badConsumerOption('deadLetterPolicy.topic is a topic name');
  }
  return { ...policy };
}

export function checkPermits(permits: unknown): number {
  if (!isIntegerIn(permits, 1, MAX_AVAILABLE_PERMITS)) {
    throw invalidArgument(
      SubscriptionReason.INVALID_PERMITS,
      `flow permits are an integer from 1 to ${MAX_AVAILABLE_PERMITS} messages, got ${String(permits)}`,
    );
  }
  return permits;
}

/**
 * The positions of a Nack (or of an Ack's individual acks): at most
 * maxAckPositionsPerCall (LIMIT_EXCEEDED past it), each naming an entry
 * (INVALID_POSITION otherwise), checked before any is used.
 */
export function checkPositions(positions: unknown, what: string): EntryPosition[] {
  if (!Array.isArray(positions))
    throw invalidArgument(SubscriptionReason.INVALID_ACK, `${what} takes an array of positions`);
  checkWithinLimit('maxAckPositionsPerCall', positions.length, `${what} positions`);
  return positions.map((p) => checkEntryPosition(p, `${what} position`));
}

export interface CheckedBatchAck {
  position: EntryPosition;
  ackedIndexes: number[];
  batchSize: number;
}

/** An Ack that passed checkAckRequest: only that function builds its positions. */
export interface CheckedAck {
  positions: EntryPosition[];
  /** Inclusive ranges of one ledger each, acknowledged whole as `positions` are. */
  ranges: CheckedEntryRange[];
  batchAcks: CheckedBatchAck[];
  cumulative: EntryPosition | undefined;
}

/**
 * An Ack as it arrives, before any check: ids as numbers (in process) or
 * int64 bigints (a Consume stream's Ack, as protobuf-es decodes it), so the
 * wire hands its request here as it is and nothing is built twice.
 */
export interface UncheckedAck {
  positions?: readonly unknown[];
  ranges?: readonly unknown[];
  batchIndexAcks?: readonly UncheckedBatchAck[];
  cumulative?: unknown;
}

interface UncheckedBatchAck {
  position?: unknown;
  ackedIndexes?: readonly unknown[];
  batchSize?: unknown;
}

function checkBatchAck(b: UncheckedBatchAck): CheckedBatchAck {
  const position = checkEntryPosition(b?.position, 'batch-index ack position');
  const batchSize = b.batchSize;
  if (!isIntegerIn(batchSize, 1, MAX_BATCH_SIZE)) {
    throw invalidArgument(SubscriptionReason.INVALID_ACK, `batchSize is 1 to ${MAX_BATCH_SIZE}`);
  }
  const indexes = b.ackedIndexes;
  if (
    !Array.isArray(indexes) ||
    indexes.length > batchSize ||
    !indexes.every((i) => isIntegerIn(i, 0, batchSize - 1))
  ) {
    throw invalidArgument(SubscriptionReason.INVALID_ACK, `acked indexes are distinct integers in [0, ${batchSize})`);
  }
  return { position, ackedIndexes: [...new Set(indexes as number[])], batchSize };
}

/**
 * Checks a whole Ack before any of it is applied, so a bad one changes
 * nothing: the counts against DATA_PATH_LIMITS first (LIMIT_EXCEEDED; a range
 * counts as the entries it names, see cursor-codec's checkEntryAcks), then
 * every position and range (INVALID_POSITION), then the batch indexes
 * (INVALID_ACK).
 * The one place an Ack is validated: the Consume stream calls it where the
 * request enters, and Consumer.acknowledge for callers in process.
 */
export function checkAckRequest(ack: UncheckedAck): CheckedAck {
  if (typeof ack !== 'object' || ack === null) {
    throw invalidArgument(SubscriptionReason.INVALID_ACK, 'an ack is an object');
  }
  const rawBatchAcks = ack.batchIndexAcks ?? [];
  if (!Array.isArray(rawBatchAcks))
    throw invalidArgument(SubscriptionReason.INVALID_ACK, 'batch-index acks are an array');
  checkWithinLimit('maxBatchIndexAcksPerCall', rawBatchAcks.length, 'ack batch-index acks');
  const { positions, ranges } = checkEntryAcks(ack.positions ?? [], ack.ranges ?? [], 'ack');
  const batchAcks = rawBatchAcks.map(checkBatchAck);
  const cumulative = ack.cumulative === undefined ? undefined : checkEntryPosition(ack.cumulative, 'cumulative ack');
  return { positions, ranges, batchAcks, cumulative };
}
