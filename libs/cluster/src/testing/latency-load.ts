import { createClient, type LedgerlineClient, type Producer } from '@ledgerline/client';
import type { LocalCluster } from '../local-cluster.js';
import { ClusterClients } from './clients.js';

/** One acknowledged send: what it carried, where it was stored, when, and how long it took. */
export interface TimedAck {
  payload: string;
  offset: bigint;
  duplicate: boolean;
  atMs: number;
  latencyMs: number;
}

/** Sends in flight at once at most: a stalled owner holds this many, and the pacing waits. */
const MAX_IN_FLIGHT = 64;

/**
 * A producer (with deduplication) sending at a steady rate, recording each
 * send's latency: the failover tests read the latency across a crash from it.
 * The check reads the topic back and compares it with the acknowledgements:
 * each acknowledged payload stored once, at the offset it was acknowledged at.
 */
export class LatencyLoad {
  readonly acks: TimedAck[] = [];
  readonly failures: string[] = [];
  private running = true;
  private sending: Promise<void> | undefined;

  private constructor(
    readonly client: LedgerlineClient,
    readonly topic: string,
    private readonly producer: Producer,
  ) {}

  static async start(cluster: LocalCluster, name: string, messagesPerSecond: number): Promise<LatencyLoad> {
    const clients = new ClusterClients(cluster);
    const topic = `persistent://${name}/ns/load`;
    try {
      await clients.createRetainedNamespace(`${name}/ns`);
      await clients.admin.createTopic({ topic });
    } finally {
      clients.close();
    }
    // Reconnects at most 100 ms apart: the failover is measured, not the client's backoff.
    const client = createClient({
      serviceUrl: cluster.metadataTarget,
      maxReconnectAttempts: 600,
      reconnectMaxDelayMs: 100,
    });
    const producer = await client.producer({ topic, producerName: `${name}-producer`, batching: false });
    const load = new LatencyLoad(client, topic, producer);
    load.sending = load.send(1000 / messagesPerSecond);
    return load;
  }

  private async send(intervalMs: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let next = performance.now();
    for (let sent = 0; this.running; sent++) {
      const payload = `m${sent}`;
      const startedMs = performance.now();
      const tracked: Promise<void> = this.producer
        .send(payload)
        .then(
          (receipt) => {
            const { offset, duplicate } = receipt;
            this.acks.push({ payload, offset, duplicate, atMs: Date.now(), latencyMs: performance.now() - startedMs });
          },
          (error: unknown) => void this.failures.push(`${payload}: ${String(error)}`),
        )
        .finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      next += intervalMs;
      const waitMs = next - performance.now();
      if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
      else next = performance.now();
    }
    await Promise.all(inFlight);
  }

  /** The first acknowledgement at or after `sinceMs`. */
  firstAckSince(sinceMs: number): TimedAck | undefined {
    return this.acks.find((ack) => ack.atMs >= sinceMs);
  }

  /** Stops sending and waits for every send in flight to be answered. */
  async stop(): Promise<void> {
    this.running = false;
    await this.sending;
  }

  /** What is wrong with the stored topic against the acknowledgements (empty when nothing is). */
  async check(): Promise<string[]> {
    const problems: string[] = [];
    const [stats] = await this.client.topicStats(this.topic);
    const stored = Number(stats!.stats.nextOffset);
    const reader = await this.client.reader({ topic: this.topic, start: 'earliest' });
    const offsetOf = new Map<string, bigint>();
    try {
      for (let index = 0; index < stored; index++) {
        const message = await reader.readNext();
        const payload = Buffer.from(message.payload).toString();
        if (message.offset !== BigInt(index)) problems.push(`offset ${message.offset} where ${index} was next`);
        if (offsetOf.has(payload)) problems.push(`${payload} stored twice`);
        offsetOf.set(payload, message.offset);
      }
    } finally {
      await reader.close();
    }
    for (const ack of this.acks) {
      const offset = offsetOf.get(ack.payload);
      if (offset === undefined) problems.push(`${ack.payload} acknowledged at offset ${ack.offset} and lost`);
      else if (offset !== ack.offset && !(ack.duplicate && ack.offset === -1n))
        problems.push(`${ack.payload} acknowledged at offset ${ack.offset}, stored at ${offset}`);
    }
    return problems.slice(0, 20);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.producer.close().catch(() => undefined);
    await this.client.close();
  }
}
