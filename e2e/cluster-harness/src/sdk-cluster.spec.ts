import { createClient, type LedgerlineClient, type Message } from '@ledgerline/client';
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients, takeoverSettings } from './index.js';

// The client SDK against a cluster of processes (two metadata instances and
// two writer owners over Redis and NATS): owners are killed and stopped while
// it produces and consumes.

const LEASE_TTL_MS = 3_000;
const TOTAL = 3_000;
/** The owner is killed once this many sends are acknowledged, */
const KILL_AT_STORED = 1_000;
/** while this many have been sent; the rest are sent after it is dead. */
const SENT_BEFORE_KILL = 1_500;

const text = (message: Message): string => Buffer.from(message.payload).toString();

describe('the client SDK against writer owners as processes', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  let client: LedgerlineClient;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 2 },
      settings: takeoverSettings(LEASE_TTL_MS),
    });
    clients = new ClusterClients(cluster);
    await clients.createRetainedNamespace('sdk/ns');
    // Enough reconnect attempts to outlast a dead owner's lease.
    client = createClient({
      serviceUrl: cluster.byRole('metadata')[1]!.address,
      maxReconnectAttempts: 100,
      reconnectMaxDelayMs: 500,
    });
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  it('stores every message exactly once while the owner is killed mid-stream, and a consumer resumes across a handover with no acknowledged message redelivered', async () => {
    const topic = 'persistent://sdk/ns/failover';
    await clients.admin.createTopic({ topic });
    const producer = await client.producer({
      topic,
      producerName: 'sdk-failover',
      batching: { maxMessages: 10, maxDelayMs: 2 },
    });
    const victim = await cluster.ownerOf(topic);
    let stored = 0;
    let killed: Promise<unknown> | undefined;
    let killIssued!: () => void;
    const killIssuedOnce = new Promise<void>((resolve) => (killIssued = resolve));
    const sends: Promise<unknown>[] = [];
    for (let index = 0; index < TOTAL; index++) {
      sends.push(
        producer.send(`m${index}`).then(() => {
          stored++;
          if (stored === KILL_AT_STORED) {
            killed = victim.stop('SIGKILL');
            killIssued();
          }
        }),
      );
      // The owner dies with sends in flight, and the rest are sent only after it died: however fast
      // it is, it cannot have acknowledged everything before the kill, so the stream must fail over.
      if (index === SENT_BEFORE_KILL - 1) {
        await killIssuedOnce;
        await killed;
      }
      if (index % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(sends);
    expect((await cluster.ownerOf(topic)).address).not.toBe(victim.address);
    // Two writer owners again, so the hand-over below has somewhere to go.
    await cluster.add('writer-owner');

    const reader = await client.reader({ topic });
    const read: string[] = [];
    for await (const message of reader) {
      read.push(text(message));
      if (read.length === TOTAL) break;
    }
    await reader.close();
    expect(read).toEqual(Array.from({ length: TOTAL }, (_, index) => `m${index}`));
    const [stats] = await client.topicStats(topic);
    expect(stats!.stats.nextOffset).toBe(BigInt(TOTAL));

    const consumer = await client.subscribe({
      topic,
      subscription: 'moving',
      initialPosition: 'earliest',
      receiverQueueSize: 100,
    });
    const acked = new Set<string>();
    let handover: Promise<unknown> | undefined;
    for await (const message of consumer) {
      expect(acked.has(text(message))).toBe(false);
      await consumer.ack(message);
      acked.add(text(message));
      if (acked.size === 1_000) handover = (await cluster.ownerOf(topic)).stop('SIGTERM');
      if (acked.size === TOTAL) break;
    }
    await handover;
    await consumer.close();
    expect(acked.size).toBe(TOTAL);
  }, 240_000);
});
