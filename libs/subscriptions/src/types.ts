import type { CheckedEntryAcks, EntryPosition, EntryRange, Position } from '@ledgerline/cursor-codec';
import type { LedgerlineError } from '@ledgerline/errors';

/** Pulsar's four subscription types, by Pulsar's names. */
export const SubscriptionType = {
  EXCLUSIVE: 'Exclusive',
  FAILOVER: 'Failover',
  SHARED: 'Shared',
  KEY_SHARED: 'Key_Shared',
} as const;
export type SubscriptionType = (typeof SubscriptionType)[keyof typeof SubscriptionType];

/** What dispatch needs to know of an entry; the owner's entries carry more (payload, offsets). */
export interface DispatchEntry {
  readonly position: Position;
  /** Messages in the entry: 1, or the batch size. Permits and unacked bounds count these. */
  readonly numMessages: number;
  readonly sizeBytes: number;
  /** The entry's ordering key (Key_Shared dispatches by it); undefined when it has none. */
  readonly key: string | undefined;
}

/** Where a seek goes: the entry to read next, an offset, or a time. */
export type SeekTarget = { position: Position } | { offset: number } | { timestampMs: number };

/**
 * The subscription's cursor and its entries, as the owner has them: on the
 * writer a ManagedCursor over its ManagedLedger, on a read-only owner a
 * read-only ledger view with the cursor kept on the writer. The subscription
 * reads each entry once for all its consumers and never calls two reads at
 * the same time.
 */
export interface SubscriptionSource<E extends DispatchEntry> {
  /**
   * Up to `maxEntries` entries from the read position on, skipping those
   * already acknowledged, and advances the read position past them; [] when
   * nothing is there yet (never waits).
   */
  readEntries(maxEntries: number): Promise<E[]>;
  /**
   * Resolves when entries past the read position may be there: at once when
   * they already are (checked synchronously, so a confirmation between a
   * read that found nothing and this call is not missed), or when `signal`
   * aborts.
   */
  waitForEntries(signal: AbortSignal): Promise<void>;
  /** The entries at these positions again, for redelivery; positions no longer there (trimmed, acked) are left out. */
  readPositions(positions: readonly Position[]): Promise<E[]>;
  /**
   * Whole entries acknowledged, single positions and inclusive ranges of one
   * ledger, checked where the ack entered (each names an entry, at most
   * maxAckPositionsPerCall entries in all). Applied all or nothing: an entry
   * the source does not have refuses the whole call. A range is applied as
   * the range it is, never one entry at a time.
   */
  ack(acks: CheckedEntryAcks): void | Promise<void>;
  ackCumulative(position: EntryPosition): void | Promise<void>;
  ackBatchIndexes(position: EntryPosition, indexes: readonly number[], batchSize: number): void | Promise<void>;
  isAcknowledged(position: Position): boolean;
  /**
   * The batch indexes of a partly acknowledged entry still to deliver;
   * undefined when none of it is acknowledged (deliver every message). A
   * source without batch-index state may leave this out.
   */
  unackedBatchIndexes?(position: Position, numMessages: number): readonly number[] | undefined;
  /** Moves the cursor (everything before the target consumed, from it on not) and its read position; resolves with the next position to read. */
  seek(target: SeekTarget): Promise<Position>;
  /** Messages not yet acknowledged. */
  backlog(): Promise<number>;
  markDeletePosition(): Position;
}

/** One delivery to a consumer. */
export interface Delivery<E extends DispatchEntry> {
  entry: E;
  /** How many times the entry was delivered before (0 on first delivery). */
  redeliveryCount: number;
  /** The batch indexes to deliver (the rest are acknowledged); undefined: every message of the entry. */
  batchIndexes: readonly number[] | undefined;
}

/** How the transport reaches one consumer (on the owners: a gRPC Consume stream). */
export interface ConsumerSink<E extends DispatchEntry> {
  /** Sends an entry. Never blocks: permits bound what the subscription sends. */
  deliver(delivery: Delivery<E>): void;
  /** Failover: this consumer became (or stopped being) the one that receives. */
  activeChanged(active: boolean): void;
  /** The subscription closed the consumer (topic unloaded, subscription closed); the transport ends the stream with `error`. */
  close(error: LedgerlineError): void;
}

/** Pulsar's dead-letter policy, per consumer as Pulsar's clients have it. */
export interface DeadLetterPolicy {
  /** Redeliveries allowed: a message is delivered at most 1 + this many times, then dead-lettered. 0: never. */
  maxRedeliveries: number;
  /** The dead-letter topic; the owner picks its default (`<topic>-<subscription>-DLQ`) when undefined. */
  topic?: string;
}

/**
 * Publishes an entry to its dead-letter topic; the subscription acknowledges
 * the entry once this resolves, and tries again later if it rejects.
 */
export type DeadLetterPublisher<E extends DispatchEntry> = (entry: E, policy: DeadLetterPolicy) => Promise<void>;

export interface ConsumerOptions<E extends DispatchEntry> {
  /** 1 to MAX_CONSUMER_NAME_LENGTH characters. Failover picks its active consumer by name. */
  name: string;
  type: SubscriptionType;
  sink: ConsumerSink<E>;
  /** Failover: lower levels are picked first (Pulsar's priorityLevel). Default 0. */
  priorityLevel?: number;
  /** Unacknowledged messages are redelivered this long after delivery; 0 (default): never. */
  ackTimeoutMs?: number;
  /** Nacked messages are redelivered after this long; default DEFAULT_NACK_REDELIVERY_DELAY_MS, 0 at once. */
  nackRedeliveryDelayMs?: number;
  deadLetterPolicy?: DeadLetterPolicy;
}

/** An Ack as the Consume stream carries it: applied in the order positions and ranges, batch indexes, cumulative. */
export interface AckRequest {
  positions?: readonly Position[];
  /** Inclusive ranges of one ledger each, acknowledged whole as `positions` are. */
  ranges?: readonly EntryRange[];
  batchIndexAcks?: readonly { position: Position; ackedIndexes: readonly number[]; batchSize: number }[];
  cumulative?: Position;
}

/** topics.proto's ConsumerStats, plus what was redelivered. */
export interface ConsumerStats {
  name: string;
  unackedMessages: number;
  availablePermits: number;
  blockedOnUnacked: boolean;
  msgRateOut: number;
  msgThroughputOut: number;
  redeliveredMessages: number;
  active: boolean;
}

/**
 * What dispatch is doing: working, waiting for the source to have entries,
 * waiting for a consumer able to take one, or pausing before it reads again
 * (a read failed, or the source woke it MAX_EMPTY_WAKEUPS times for nothing).
 */
export type DispatchState = 'running' | 'waiting-for-entries' | 'waiting-for-consumers' | 'retrying' | 'closed';

/** topics.proto's SubscriptionStats, less what only the cursor knows (ack holes, state bytes), which the owner adds. */
export interface SubscriptionStats {
  name: string;
  type: SubscriptionType | undefined;
  backlogMessages: number;
  markDelete: Position;
  unackedMessages: number;
  blockedOnUnacked: boolean;
  msgRateOut: number;
  msgThroughputOut: number;
  redeliveredMessages: number;
  /** Positions waiting to be redelivered (or held back for Key_Shared ordering). */
  replayPositions: number;
  dispatchState: DispatchState;
  consumers: ConsumerStats[];
}
