import type { LedgerlineClient, Producer } from '@ledgerline/client';
import type { LocalCluster } from '@ledgerline/cluster';
import { checkStoredAgainstAcks, type Ack } from './ack-check.js';
import { ClusterClients } from './clients.js';
import { loadClient, sendPaced } from './paced-sends.js';

/** Producers opened at once while the load starts: each is a lookup and a stream to its owner. */
const OPEN_CONCURRENCY = 16;
/** Sends in flight at once per topic at most: a stalled owner holds this many, and that topic's pacing waits. */
const MAX_IN_FLIGHT_PER_TOPIC = 16;

/** One topic of the load: its producer and what it was answered. */
interface TopicSender {
  topic: string;
  producer: Producer;
  acks: Ack[];
}

/**
 * Many busy topics, as an application with one producer per topic sends to
 * them (one client, batching off, deduplication on): each topic gets
 * `messagesPerSecond` sends a second, their starts spread over the first
 * second so they do not all fire together. Records each send's latency; the
 * check reads every topic back against its acknowledgements (nothing lost,
 * nothing stored twice, each topic's next offset equal to what was acknowledged).
 */
export class TopicsLoad {
  readonly failures: string[] = [];
  private running = true;
  private sending: Promise<void> | undefined;

  private constructor(
    readonly client: LedgerlineClient,
    private readonly senders: TopicSender[],
  ) {}

  static async start(
    cluster: LocalCluster,
    name: string,
    topicCount: number,
    messagesPerSecond: number,
  ): Promise<TopicsLoad> {
    const topics = Array.from({ length: topicCount }, (_, i) => `persistent://${name}/ns/t${i}`);
    const clients = new ClusterClients(cluster);
    try {
      await clients.createRetainedNamespace(`${name}/ns`);
      for (let i = 0; i < topics.length; i += 100)
        await clients.admin.createTopics({ topics: topics.slice(i, i + 100) });
    } finally {
      clients.close();
    }
    const client = loadClient(cluster);
    const senders: TopicSender[] = [];
    let next = 0;
    const open = async (): Promise<void> => {
      while (next < topics.length) {
        const topic = topics[next++]!;
        const producer = await client.producer({
          topic,
          producerName: `${topic.split('/').pop()}-producer`,
          batching: false,
        });
        senders.push({ topic, producer, acks: [] });
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, topics.length) }, open));
    const load = new TopicsLoad(client, senders);
    const intervalMs = 1000 / messagesPerSecond;
    load.sending = Promise.all(
      senders.map((sender, i) => load.send(sender, intervalMs, (i / senders.length) * 1000)),
    ).then(() => undefined);
    return load;
  }

  /** Every topic's acknowledgements, in no particular order across topics. */
  get acks(): Ack[] {
    return this.senders.flatMap((sender) => sender.acks);
  }

  /** Whether every topic has at least `count` acknowledgements: each loaded on its owner and its producer warm. */
  everyTopicAcked(count: number): boolean {
    return this.senders.every((sender) => sender.acks.length >= count);
  }

  /** One topic's acknowledgements so far, in the order they came. */
  acksOf(topic: string): readonly Ack[] {
    return this.senders.find((sender) => sender.topic === topic)?.acks ?? [];
  }

  get topics(): string[] {
    return this.senders.map((sender) => sender.topic);
  }

  /** One topic's sends, its start put off by `offsetMs` so the topics do not all fire together. */
  private async send(sender: TopicSender, intervalMs: number, offsetMs: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, offsetMs));
    await sendPaced(sender.producer, {
      intervalMs,
      maxInFlight: MAX_IN_FLIGHT_PER_TOPIC,
      running: () => this.running,
      acks: sender.acks,
      failed: (payload, error) => void this.failures.push(`${sender.topic} ${payload}: ${String(error)}`),
    });
  }

  /** Stops sending and waits for every send in flight to be answered. */
  async stop(): Promise<void> {
    this.running = false;
    await this.sending;
  }

  /** What is wrong with the stored topics against the acknowledgements (empty when nothing is), topic by topic. */
  async check(): Promise<string[]> {
    const problems: string[] = [];
    for (const sender of this.senders) {
      const found = await checkStoredAgainstAcks(this.client, sender.topic, sender.acks);
      problems.push(...found.map((problem) => `${sender.topic}: ${problem}`));
    }
    return problems;
  }

  async close(): Promise<void> {
    await this.stop();
    await Promise.all(this.senders.map((sender) => sender.producer.close().catch(() => undefined)));
    await this.client.close();
  }
}
