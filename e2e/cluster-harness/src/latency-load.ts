import type { LedgerlineClient, Producer } from '@ledgerline/client';
import type { LocalCluster } from '@ledgerline/cluster';
import { checkStoredAgainstAcks, type Ack } from './ack-check.js';
import { ClusterClients } from './clients.js';
import { loadClient, sendPaced } from './paced-sends.js';

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
    const client = loadClient(cluster);
    const producer = await client.producer({ topic, producerName: `${name}-producer`, batching: false });
    const load = new LatencyLoad(client, topic, producer);
    load.sending = sendPaced(producer, {
      intervalMs: 1000 / messagesPerSecond,
      maxInFlight: MAX_IN_FLIGHT,
      running: () => load.running,
      acks: load.acks,
      failed: (payload, error) => void load.failures.push(`${payload}: ${String(error)}`),
    });
    return load;
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
