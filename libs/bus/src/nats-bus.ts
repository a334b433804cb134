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
  /**
   * When no server answers within connectTimeoutMs: false (default) fails
   * connect() with UNAVAILABLE; true returns a bus that is disconnected
   * (publish drops, as during an outage) and keeps connecting in the
   * background, its subscriptions receiving from the first connection on.
   * Services start this way: notifications are hints, so NATS being late
   * must not keep a service from serving.
   */
  connectInBackground?: boolean;
  /** Told once when connect() returned a bus that is still connecting (connectInBackground). */
  onConnectingInBackground?: (cause: unknown) => void;
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
  private connection: NatsConnection | undefined;
  private connected = false;
  private closed = false;
  /** Each subscription with its NATS subscription (none while the first connection is still being made). */
  private readonly live = new Map<BoundedSubscription, Subscription | undefined>();
  private readonly counters = { published: 0, delivered: 0, publishDropped: 0, subscriberDropped: 0, disconnects: 0 };
  private maxPayloadBytes: number;
  private readonly flushTimeoutMs: number;

  private constructor(private readonly options: NatsBusOptions) {
    this.maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    this.flushTimeoutMs = options.flushTimeoutMs ?? 2000;
  }

  private attach(connection: NatsConnection): void {
    this.connection = connection;
    this.connected = true;
    const serverMax = connection.info?.max_payload ?? Number.MAX_SAFE_INTEGER;
    this.maxPayloadBytes = Math.min(this.options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES, serverMax);
    for (const subscription of this.live.keys()) this.live.set(subscription, this.natsSubscribe(subscription));
    this.watchStatus(connection).catch(unexpectedRejection);
  }

  /**
   * Connects to NATS, trying again (a server refusing or a name not resolving
   * yet, as while the pods of a cluster start) until connectTimeoutMs has
   * gone by; then fails with UNAVAILABLE / BUS_UNAVAILABLE.
   */
  static async connect(options: NatsBusOptions): Promise<NatsBus> {
    const bus = new NatsBus(options);
    try {
      bus.attach(await firstConnection(options));
    } catch (cause) {
      if (options.connectInBackground !== true) throw cause;
      options.onConnectingInBackground?.(cause);
      bus.connectInBackground().catch(unexpectedRejection);
    }
    return bus;
  }

  /** Tries again, each try as long as the first, until a connection is made or the bus is closed. */
  private async connectInBackground(): Promise<void> {
    while (!this.closed) {
      let connection: NatsConnection;
      try {
        connection = await firstConnection(this.options, () => this.closed);
      } catch {
        continue;
      }
      if (this.closed) await withTimeout(connection.close(), this.flushTimeoutMs);
      else this.attach(connection);
      return;
    }
  }

  async publish(subject: string, data: Uint8Array): Promise<void> {
    if (this.closed) throw busClosedError();
    validateSubject(subject);
    checkPayload(data, this.maxPayloadBytes);
    if (!this.connected || this.connection === undefined) {
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
      if (natsSubscription !== undefined && this.connection?.isClosed() === false) natsSubscription.unsubscribe();
    });
    this.live.set(subscription, this.natsSubscribe(subscription));
    return subscription;
  }

  private natsSubscribe(subscription: BoundedSubscription): Subscription | undefined {
    return this.connection?.subscribe(subscription.pattern, {
      callback: (error, msg) => {
        if (error !== null) return subscription.unsubscribe();
        if (subscription.push({ subject: msg.subject, data: msg.data })) this.counters.delivered++;
      },
    });
  }

  async flush(): Promise<void> {
    if (this.closed || !this.connected || this.connection === undefined) return;
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
    const connection = this.connection;
    if (connection === undefined) return;
    if (this.connected) await withTimeout(connection.flush(), this.flushTimeoutMs);
    await withTimeout(connection.close(), this.flushTimeoutMs);
  }

  private async watchStatus(connection: NatsConnection): Promise<void> {
    for await (const status of connection.status()) {
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

/**
 * One connection, trying again (a server refusing or a name not resolving
 * yet, as while the pods of a cluster start) until connectTimeoutMs has gone
 * by; then UNAVAILABLE / BUS_UNAVAILABLE.
 */
async function firstConnection(options: NatsBusOptions, stopped = (): boolean => false): Promise<NatsConnection> {
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const deadline = Date.now() + connectTimeoutMs;
  const reconnectWaitMs = options.reconnectWaitMs ?? 500;
  try {
    return await backOff(
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
        retry: () => !stopped() && Date.now() + FIRST_RETRY_MS < deadline,
      },
    );
  } catch (cause) {
    throw new LedgerlineError(
      'UNAVAILABLE',
      BusReason.BUS_UNAVAILABLE,
      `cannot connect to NATS at ${String(options.servers)} within ${connectTimeoutMs} ms`,
      { cause },
    );
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
