/**
 * The notification bus: fire-and-forget messages on NATS-style subjects.
 *
 * Delivery is at most once. A subscriber that is slow, disconnected or simply
 * unlucky misses messages, so every consumer must converge without them:
 * notifications are hints to re-read the source of truth (the metadata store
 * or the ledger store), never the truth itself.
 */
export interface Bus {
  publish(subject: string, data: Uint8Array): Promise<void>;
  /** Subject patterns use NATS wildcards: `*` one token, `>` the rest. */
  subscribe(pattern: string): BusSubscription;
  close(): Promise<void>;
}

export interface BusMessage {
  subject: string;
  data: Uint8Array;
}

export interface BusSubscription extends AsyncIterable<BusMessage> {
  unsubscribe(): void;
}
