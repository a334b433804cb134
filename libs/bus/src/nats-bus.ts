import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { backOff } from 'exponential-backoff';
import { BoundedSubscription, resolveSubscribeOptions } from './bounded-subscription.js';
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  MAX_SUBSCRIPTIONS,
  type Bus,
  type BusStats,
  type BusSubscription,
  type SubscribeOptions,
} from './bus.js';
import { busClosedError, checkPayload, BusReason } from './bus-errors.js';
import { validateSubject, validateSubjectPattern } from './subject-syntax.js';

export interface NatsBusOptions {
  /** One or more `nats://host:port` addresses. */
  servers: string | string[];
  /** Client name shown by the server's monitoring. */
  name?: string;
  /** How long the first connection may take before connect() fails with UNAVAILABLE; default 5000. */
  connectTimeoutMs?: number;
  /** Wait between reconnect attempts (plus up to 100 ms jitter); default 500. Reconnects never give up. */
  reconnectWaitMs?: number;
  /** How long flush() and close() wait for the server; default 2000. */
  flushTimeoutMs?: number;
  /** Interval of the client's PINGs that detect a dead server; default 5000 (two missed ones reconnect). */
  pingIntervalMs?: number;
  /** Largest payload accepted (the server's own max_payload applies too); default DEFAULT_MAX_PAYLOAD_BYTES. */
  maxPayloadBytes?: number;
}

/** The first wait before connecting again at start; it doubles up to reconnectWaitMs. */
const FIRST_RETRY_MS = 50;

/**
 * The bus on NATS core subjects. It reconnects forever with a bounded wait
 * between attempts and resubscribes by itself. While disconnected, publish
 * drops the message and counts it (the client would otherwise buffer without
 * bound); delivery is at most once either way.
 */
export class NatsBus implements Bus {
  private connected = true;
  private closed = false;
  private readonly live = new Map<BoundedSubscription, Subscription>();
  private readonly counters = { published: 0, delivered: 0, publishDropped: 0, subscriberDropped: 0, disconnects: 0 };
  private readonly maxPayloadBytes: number;
  private readonly flushTimeoutMs: number;

  private constructor(
    private readonly connection: NatsConnection,
    options: NatsBusOptions,
  ) {
    const serverMax = connection.info?.max_payload ?? Number.MAX_SAFE_INTEGER;
    this.maxPayloadBytes = Math.min(options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, serverMax);
    this.flushTimeoutMs = options.flushTimeoutMs ?? 2000;
    this.watchStatus().catch(unexpectedRejection);
  }

  /**
   * Connects to NATS, trying again (a server refusing or a name not resolving
   * yet, as while the pods of a cluster start) until connectTimeoutMs has
   * gone by; then fails with UNAVAILABLE / BUS_UNAVAILABLE.
   */
  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    const deadline = Date.now() + connectTimeoutMs;
    const reconnectWaitMs = options.reconnectWaitMs ?? 500;
    try {
      const connection = await backOff(
        () =>
          connect({
            servers: options.servers,
            name: options.name ?? 'ledgerline',
            timeout: Math.max(1, deadline - Date.now()),
            reconnect: true,
            maxReconnectAttempts: -1,
            reconnectTimeWait: reconnectWaitMs,
            reconnectJitter: 100,
            pingInterval: options.pingIntervalMs ?? 5000,
            maxPingOut: 2,
          }),
        {
          numOfAttempts: Number.MAX_SAFE_INTEGER,
          startingDelay: FIRST_RETRY_MS,
          maxDelay: reconnectWaitMs,
          retry: () => Date.now() + FIRST_RETRY_MS < deadline,
        },
      );
      return new NatsBus(connection, options);
    } catch (cause) {
      throw new LedgerlineError(
        'UNAVAILABLE',
        BusReason.BUS_UNAVAILABLE,
        `cannot connect to NATS at ${String(options.servers)} within ${connectTimeoutMs} ms`,
        {
          cause,
        },
      );
    }
  }

  async publish(subject: string, data: Uint8Array): Promise<void> {
    if (this.closed) throw busClosedError();
    validateSubject(subject);
    checkPayload(data, this.maxPayloadBytes);
    if (!this.connected) {
      this.counters.publishDropped++;
      return;
    }
    try {
      this.connection.publish(subject, data);
      this.counters.published++;
    } catch {
      // The connection closed or started draining under us: a lost hint, never the caller's failure.
      this.counters.publishDropped++;
    }
  }

  subscribe(pattern: string, options?: SubscribeOptions): BusSubscription {
    if (this.closed) throw busClosedError();
    validateSubjectPattern(pattern);
    const resolved = resolveSubscribeOptions(options);
    if (this.live.size >= MAX_SUBSCRIPTIONS) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        BusReason.TOO_MANY_SUBSCRIPTIONS,
        `the bus already holds ${MAX_SUBSCRIPTIONS} subscriptions; unsubscribe unused ones`,
      );
    }
    const subscription = new BoundedSubscription(pattern, resolved, (ended, dropped) => {
      this.counters.subscriberDropped += dropped;
      const natsSubscription = this.live.get(ended);
      this.live.delete(ended);
      if (natsSubscription !== undefined && !this.connection.isClosed()) natsSubscription.unsubscribe();
    });
    const natsSubscription = this.connection.subscribe(pattern, {
      callback: (error, msg) => {
        if (error !== null) return subscription.unsubscribe();
        if (subscription.push({ subject: msg.subject, data: msg.data })) this.counters.delivered++;
      },
    });
    this.live.set(subscription, natsSubscription);
    return subscription;
  }

  async flush(): Promise<void> {
    if (this.closed || !this.connected) return;
    await withTimeout(this.connection.flush(), this.flushTimeoutMs);
  }

  stats(): BusStats {
    let liveDropped = 0;
    for (const subscription of this.live.keys()) liveDropped += subscription.dropped;
    return {
      published: this.counters.published,
      delivered: this.counters.delivered,
      publishDropped: this.counters.publishDropped,
      subscriberDropped: this.counters.subscriberDropped + liveDropped,
      connected: this.connected && !this.closed,
      disconnects: this.counters.disconnects,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const subscription of [...this.live.keys()]) subscription.unsubscribe();
    if (this.connected) await withTimeout(this.connection.flush(), this.flushTimeoutMs);
    await withTimeout(this.connection.close(), this.flushTimeoutMs);
  }

  private async watchStatus(): Promise<void> {
    for await (const status of this.connection.status()) {
      if (status.type === 'disconnect') {
        if (this.connected) this.counters.disconnects++;
        this.connected = false;
      } else if (status.type === 'reconnect') {
        this.connected = true;
      } else if (status.type === 'close') {
        this.connected = false;
      }
    }
  }
}

// Resolves when the promise settles or the time is up, whichever comes first; never rejects.
async function withTimeout(promise: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  try {
    await Promise.race([promise.then(() => undefined).catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
