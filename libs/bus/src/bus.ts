/**
 * The notification bus: fire-and-forget messages on NATS-style subjects.
 *
 * Delivery is at most once. A subscriber that is slow, disconnected or simply
 * unlucky misses messages, so every consumer must converge without them:
 * notifications are hints to re-read the source of truth (the metadata store
 * or the ledger store), never the truth itself.
 *
 * Subjects are `.`-separated tokens of printable ASCII without spaces; a
 * pattern may use `*` for exactly one token and `>` (last token only) for one
 * or more trailing tokens. A bad subject or pattern is INVALID_ARGUMENT.
 * Messages from one publisher reach each subscriber in publish order (minus the
 * ones it missed).
 */
export interface Bus {
  /**
   * Sends a message. Never fails because the transport is down: the message is
   * dropped and counted in `stats()` instead. Rejects only on bad input
   * (INVALID_ARGUMENT / RESOURCE_EXHAUSTED) or after close (FAILED_PRECONDITION).
   */
  publish(subject: string, data: Uint8Array): Promise<void>;
  /** Subject patterns use NATS wildcards: `*` one token, `>` the rest. */
  subscribe(pattern: string, options?: SubscribeOptions): BusSubscription;
  /**
   * Resolves once every publish and subscribe issued before it has reached the
   * transport (for NATS: a round trip to the server), so a subscriber created
   * before flush() sees messages published after it. Never rejects while the
   * transport is down; it waits at most `flushTimeoutMs` of the backend.
   */
  flush(): Promise<void>;
  /** Counters for metrics: what was sent, received and dropped. */
  stats(): BusStats;
  /** Ends every subscription; later publishes reject with FAILED_PRECONDITION. */
  close(): Promise<void>;
}

export interface BusMessage {
  subject: string;
  /** Shared between subscribers of one message: treat as read-only. */
  data: Uint8Array;
}

/**
 * An async iterable of messages with a bounded buffer. When the consumer falls
 * behind by more than `bufferSize` messages, the overflow policy drops
 * messages and counts them in `dropped`. Iterate it once; breaking out of the
 * loop unsubscribes.
 */
export interface BusSubscription extends AsyncIterable<BusMessage> {
  readonly pattern: string;
  /** Messages this subscription lost to buffer overflow. */
  readonly dropped: number;
  /** Ends the iteration at once; buffered messages are discarded. */
  unsubscribe(): void;
}

export type OverflowPolicy = 'drop-oldest' | 'drop-newest';

export interface SubscribeOptions {
  /** Messages held for a slow consumer, 1 to MAX_SUBSCRIPTION_BUFFER; default DEFAULT_SUBSCRIPTION_BUFFER. */
  bufferSize?: number;
  /** Which message to lose when the buffer is full; default 'drop-oldest' (the newest hint is the useful one). */
  overflow?: OverflowPolicy;
}

export interface BusStats {
  published: number;
  /** Messages handed to local subscriptions. */
  delivered: number;
  /** Publishes dropped because the transport was down or refused them. */
  publishDropped: number;
  /** Messages dropped by subscriptions whose consumer fell behind (all subscriptions, including ended ones). */
  subscriberDropped: number;
  /** Whether the transport is connected now (always true in process). */
  connected: boolean;
  /** Times the transport lost its connection. */
  disconnects: number;
}

export const DEFAULT_SUBSCRIPTION_BUFFER = 10_000;
export const MAX_SUBSCRIPTION_BUFFER = 1_000_000;
/** Longest subject or pattern, in bytes; below NATS's 4 KiB control line with room for the protocol verb. */
export const MAX_SUBJECT_BYTES = 3584;
/** Largest message payload; NATS's default max_payload. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
/** Subscriptions one bus holds at once. */
export const MAX_SUBSCRIPTIONS = 100_000;
