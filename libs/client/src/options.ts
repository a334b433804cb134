import { LedgerlineError } from '@ledgerline/errors';
import { ClientReason } from './client-reason.js';

/** Default for ClientOptions.operationTimeoutMs: how long one lookup or unary call may take. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 30_000;
/** Upper bound of ClientOptions.operationTimeoutMs. */
export const MAX_OPERATION_TIMEOUT_MS = 600_000;
/** Default for ClientOptions.reconnectInitialDelayMs. */
export const DEFAULT_RECONNECT_INITIAL_DELAY_MS = 50;
/** Default for ClientOptions.reconnectMaxDelayMs. */
export const DEFAULT_RECONNECT_MAX_DELAY_MS = 2_000;
/** Upper bound of both reconnect delays. */
export const MAX_RECONNECT_DELAY_MS = 60_000;
/** Default for ClientOptions.maxReconnectAttempts: with the default delays, about 30 s of trying. */
export const DEFAULT_MAX_RECONNECT_ATTEMPTS = 20;
/** Upper bound of ClientOptions.maxReconnectAttempts. */
export const MAX_RECONNECT_ATTEMPTS = 10_000;

/**
 * The largest entry (a message or a batch, encoded) the client sends: the gRPC
 * message limit (4 MiB) less room for the request's own fields.
 */
export const MAX_ENTRY_SIZE_BYTES = 4 * 1024 * 1024 - 64 * 1024;
/** Default for BatchingOptions.maxMessages (Pulsar's batchingMaxMessages). */
export const DEFAULT_BATCH_MAX_MESSAGES = 1000;
/** Upper bound of BatchingOptions.maxMessages. */
export const MAX_BATCH_MESSAGES = 10_000;
/** Default for BatchingOptions.maxBytes (Pulsar's batchingMaxBytes). */
export const DEFAULT_BATCH_MAX_BYTES = 128 * 1024;
/** Default for BatchingOptions.maxDelayMs (Pulsar's batchingMaxPublishDelay). */
export const DEFAULT_BATCH_MAX_DELAY_MS = 1;
/** Upper bound of BatchingOptions.maxDelayMs. */
export const MAX_BATCH_DELAY_MS = 10_000;
/** Default for ProducerOptions.maxPendingMessages: sends wait for room beyond it. */
export const DEFAULT_MAX_PENDING_MESSAGES = 10_000;
/** Upper bound of ProducerOptions.maxPendingMessages. */
export const MAX_PENDING_MESSAGES = 1_000_000;
/** Longest producer or consumer name. */
export const MAX_NAME_LENGTH = 256;
/** Default for SubscribeOptions.receiverQueueSize and ReaderOptions.receiverQueueSize (Pulsar's). */
export const DEFAULT_RECEIVER_QUEUE_SIZE = 1000;
/** Upper bound of receiverQueueSize. */
export const MAX_RECEIVER_QUEUE_SIZE = 100_000;
/** Smallest non-zero ackTimeoutMs (Pulsar's floor). */
export const MIN_ACK_TIMEOUT_MS = 1_000;
/** Upper bound of ackTimeoutMs and nackRedeliveryDelayMs: one day. */
export const MAX_ACK_TIMEOUT_MS = 86_400_000;
export const MAX_REDELIVERY_DELAY_MS = 86_400_000;
/** Default for SubscribeOptions.nackRedeliveryDelayMs (Pulsar's). */
export const DEFAULT_NACK_REDELIVERY_DELAY_MS = 60_000;
/** Upper bound of DeadLetterOptions.maxRedeliveries. */
export const MAX_DEAD_LETTER_REDELIVERIES = 1_000_000;

/** A LedgerlineError INVALID_ARGUMENT / INVALID_OPTION naming the option. */
export function invalidOption(option: string, message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', ClientReason.INVALID_OPTION, `${option} ${message}`, {
    details: { option },
  });
}

/** An integer option in [min, max], or its default when absent. */
export function integerOption(option: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidOption(option, `must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/** A non-empty string option of at most `maxLength` characters, or its default when absent. */
export function stringOption(option: string, value: unknown, fallback: string, maxLength = MAX_NAME_LENGTH): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '' || value.length > maxLength) {
    throw invalidOption(option, `must be a non-empty string of at most ${maxLength} characters`);
  }
  return value;
}

/** A boolean option, or its default when absent. */
export function booleanOption(option: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalidOption(option, `must be true or false, got a ${typeof value}`);
  return value;
}

/** One of the allowed values, or the default when absent. */
export function choiceOption<T extends string>(option: string, value: unknown, fallback: T, allowed: readonly T[]): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalidOption(option, `must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

/** A required topic name (its full validation is the service's: it answers INVALID_ARGUMENT). */
export function topicOption(value: unknown): string {
  return stringOption('topic', value ?? '', '', 1024);
}
