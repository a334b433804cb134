import { createClient, type LedgerlineClient, type Producer } from '@ledgerline/client';
import type { LocalCluster } from '@ledgerline/cluster';
import { checkStoredAgainstAcks, type Ack } from './ack-check.js';
import { ClusterClients } from './clients.js';

/** Kept as the name the failover bench and specs know. */
export type TimedAck = Ack;

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
  check(): Promise<string[]> {
    return checkStoredAgainstAcks(this.client, this.topic, this.acks);
  }

  async close(): Promise<void> {
    await this.stop();
    await this.producer.close().catch(() => undefined);
    await this.client.close();
  }
}
