import { MAX_BATCH_SIZE, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument } from '@ledgerline/errors';
import { badConsumerOption, SubscriptionReason } from './errors.js';
import {
  DEFAULT_NACK_REDELIVERY_DELAY_MS,
  MAX_AVAILABLE_PERMITS,
  MAX_CONSUMER_NAME_LENGTH,
  MAX_DEAD_LETTER_REDELIVERIES,
  MAX_POSITIONS_PER_CALL,
  MAX_REDELIVERY_DELAY_MS,
  MIN_ACK_TIMEOUT_MS,
} from './limits.js';
import type { ResolvedConsumerOptions } from './consumer-state.js';
import {
  SubscriptionType,
  type AckRequest,
  type ConsumerOptions,
  type DeadLetterPolicy,
  type DispatchEntry,
} from './types.js';

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

export function checkAckPosition(p: unknown, what: string): Position {
  const candidate = p as Partial<Position> | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    !isIntegerIn(candidate.ledgerId, 0, Number.MAX_SAFE_INTEGER) ||
    !isIntegerIn(candidate.entryId, 0, Number.MAX_SAFE_INTEGER)
  ) {
    throw invalidArgument(SubscriptionReason.INVALID_ACK, `${what} must be {ledgerId >= 0, entryId >= 0}`);
  }
  return { ledgerId: candidate.ledgerId, entryId: candidate.entryId };
}

export function checkPositions(positions: unknown, what: string): Position[] {
  if (!Array.isArray(positions) || positions.length > MAX_POSITIONS_PER_CALL) {
    throw invalidArgument(
      SubscriptionReason.INVALID_ACK,
      `${what} takes at most ${MAX_POSITIONS_PER_CALL} positions (MAX_POSITIONS_PER_CALL)`,
    );
  }
  return positions.map((p) => checkAckPosition(p, `${what} position`));
}

export interface CheckedBatchAck {
  position: Position;
  ackedIndexes: number[];
  batchSize: number;
}

/** An Ack that passed checkAckRequest. */
export interface CheckedAck {
  positions: Position[];
  batchAcks: CheckedBatchAck[];
  cumulative: Position | undefined;
}

/** Checks a whole Ack before any of it is applied, so a bad one changes nothing. */
export function checkAckRequest(ack: AckRequest): CheckedAck {
  if (typeof ack !== 'object' || ack === null)
    throw invalidArgument(SubscriptionReason.INVALID_ACK, 'an ack is an object');
  const positions = checkPositions(ack.positions ?? [], 'ack');
  const rawBatchAcks = ack.batchIndexAcks ?? [];
  if (!Array.isArray(rawBatchAcks) || rawBatchAcks.length > MAX_POSITIONS_PER_CALL) {
    throw invalidArgument(SubscriptionReason.INVALID_ACK, `at most ${MAX_POSITIONS_PER_CALL} batch-index acks per ack`);
  }
  const batchAcks = rawBatchAcks.map((b) => {
    const position = checkAckPosition(b?.position, 'batch-index ack position');
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
    return { position, ackedIndexes: [...new Set(indexes)], batchSize };
  });
  const cumulative = ack.cumulative === undefined ? undefined : checkAckPosition(ack.cumulative, 'cumulative ack');
  return { positions, batchAcks, cumulative };
}
