import { createClient, type Consumer, type LedgerlineClient, type Message, type Producer } from '@ledgerline/client';
import { READ_ONLY_GROUP, type LocalCluster } from '@ledgerline/cluster';
import { checkStoredAgainstAcks, type Ack } from './ack-check.js';
import { ClusterClients } from './clients.js';

/*
 * The load the failure tests run while they kill things, and the model they
 * check it against (etcd's robustness tests in small): a producer with
 * deduplication publishes unique payloads and records each acknowledgement
 * (payload, offset, when); a consumer acknowledges what it receives. The
 * check reads the topic back whole: every acknowledged payload is stored
 * exactly once at the offset its acknowledgement named, nothing is stored
 * twice, and offsets are contiguous from 0. When the cluster has read-only
 * owners, a second consumer reads the same topic through their group (PIP-63)
 * and acknowledges there, so their failures are under load too.
 */

/** Publishes one or more in flight at once; the producer's own queue bounds the rest. */
const MAX_IN_FLIGHT = 32;

export class Workload {
  readonly acks: Ack[] = [];
  readonly failures: string[] = [];
  /** Why a consumer stopped receiving before the workload closed it (a consumer that gave up). */
  readonly consumerStops: string[] = [];
  private closing = false;
  readonly consumed = new Set<string>();
  /** What the consumer reading through the read-only owners received. */
  readonly readSideConsumed = new Set<string>();
  private sent = 0;
  private running = false;
  private producing: Promise<void> | undefined;
  private consuming: Promise<void> | undefined;
  private readSideConsuming: Promise<void> | undefined;
  private readonly ackListeners = new Set<() => void>();

  private constructor(
    readonly client: LedgerlineClient,
    readonly topic: string,
    private readonly producer: Producer,
    private readonly consumer: Consumer,
    private readonly readSide: { client: LedgerlineClient; consumer: Consumer } | undefined,
  ) {}

  /**
   * Creates tenant, namespace (retention kept, so the topic can be read back whole) and topic, then
   * starts; with read-only owners in the cluster, also a reader namespace in their group.
   */
  static async start(cluster: LocalCluster, name: string): Promise<Workload> {
    const clients = new ClusterClients(cluster);
    const topic = `persistent://${name}/ns/load`;
    const readOnly = cluster.byRole('readonly-owner').length > 0;
    try {
      await clients.createRetainedNamespace(`${name}/ns`);
      await clients.admin.createTopic({ topic });
      if (readOnly) {
        await clients.admin.createNamespace({ namespace: `${name}/reader`, policies: { ownerGroup: READ_ONLY_GROUP } });
        await clients.admin.setWriterNamespace({ namespace: `${name}/reader`, writerNamespace: `${name}/ns` });
      }
    } finally {
      clients.close();
    }
    const client = loadClient(cluster);
    const producer = await client.producer({ topic, producerName: `${name}-producer`, batching: false });
    const consumer = await client.subscribe({ topic, subscription: 'load', initialPosition: 'earliest' });
    let readSide: { client: LedgerlineClient; consumer: Consumer } | undefined;
    if (readOnly) {
      // The writer topic's name, looked up through the read-only group: the lookup redirects to the reader namespace.
      const readClient = loadClient(cluster, READ_ONLY_GROUP);
      const readConsumer = await readClient.subscribe({
        topic,
        subscription: 'read-side',
        initialPosition: 'earliest',
      });
      readSide = { client: readClient, consumer: readConsumer };
    }
    const workload = new Workload(client, topic, producer, consumer, readSide);
    workload.running = true;
    workload.producing = workload.produce();
    workload.consuming = workload.consume(consumer, workload.consumed);
    if (readSide !== undefined)
      workload.readSideConsuming = workload.consume(readSide.consumer, workload.readSideConsumed);
    return workload;
  }

  private async produce(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (this.running) {
      const payload = `m${this.sent++}`;
      const sentMs = performance.now();
      const send: Promise<void> = this.producer.send(payload).then(
        (receipt) => {
          const latencyMs = performance.now() - sentMs;
          this.acks.push({
            payload,
            offset: receipt.offset,
            duplicate: receipt.duplicate,
            atMs: Date.now(),
            latencyMs,
          });
          for (const listener of this.ackListeners) listener();
        },
        (error: unknown) => {
          this.failures.push(`${payload}: ${String(error)}`);
        },
      );
      const tracked = send.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
  }

  private async consume(consumer: Consumer, consumed: Set<string>): Promise<void> {
    for (;;) {
      let message: Message;
      try {
        message = await consumer.receive();
      } catch (error) {
        if (!this.closing) this.consumerStops.push(`${consumer.subscription}: ${String(error)}`);
        return;
      }
      consumed.add(Buffer.from(message.payload).toString());
      // Not awaited: an ack held up by a dying owner must not stop receiving. A lost ack means a redelivery.
      consumer.ack(message).catch(() => undefined);
    }
  }

  /** Resolves once `count` more acknowledgements arrived after the call, or after `timeoutMs` with false. */
  waitForAcks(count: number, timeoutMs: number): Promise<boolean> {
    const target = this.acks.length + count;
    return new Promise((resolve) => {
      const finish = (reached: boolean): void => {
        clearTimeout(timer);
        this.ackListeners.delete(check);
        resolve(reached);
      };
      const check = (): void => {
        if (this.acks.length >= target) finish(true);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.ackListeners.add(check);
      check();
    });
  }

  /** The first acknowledgement that arrived at or after `sinceMs`. */
  firstAckSince(sinceMs: number): Ack | undefined {
    return this.acks.find((ack) => ack.atMs >= sinceMs);
  }

  /** Stops publishing and waits for every send in flight to be answered. */
  async stopProducing(): Promise<void> {
    this.running = false;
    await this.producing;
    await this.producer.close();
  }

  /** What is wrong with the stored topic against the acknowledgements (empty when nothing is). */
  check(): Promise<string[]> {
    return checkStoredAgainstAcks(this.client, this.topic, this.acks);
  }

  /** How many acknowledged payloads the consumer has not received yet. */
  unconsumed(): number {
    return this.acks.filter((ack) => !this.consumed.has(ack.payload)).length;
  }

  /** The same for the consumer reading through the read-only owners (0 when the cluster has none). */
  unconsumedOnReadSide(): number {
    if (this.readSide === undefined) return 0;
    return this.acks.filter((ack) => !this.readSideConsumed.has(ack.payload)).length;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.running = false;
    await this.producing;
    // Acks in flight settle within the client's operation timeout as the consumer closes.
    await this.consumer.close().catch(() => undefined);
    await this.readSide?.consumer.close().catch(() => undefined);
    await this.consuming;
    await this.readSideConsuming;
    await this.client.close();
    await this.readSide?.client.close();
  }
}

/** Enough reconnect attempts (at most 500 ms apart) to outlast a lease lapse or a server restart. */
function loadClient(cluster: LocalCluster, group?: string): LedgerlineClient {
  return createClient({
    serviceUrl: cluster.metadataTarget,
    maxReconnectAttempts: 200,
    reconnectMaxDelayMs: 500,
    ...(group === undefined ? {} : { group }),
  });
}

/** The p-th percentile (0..100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}
