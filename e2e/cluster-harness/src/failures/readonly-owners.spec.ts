import { InitialPosition, SubscriptionType, type Entry } from '@ledgerline/proto';
import { eventually } from '@ledgerline/testing';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { RoutingProducer } from '@ledgerline/writer-owner/testing';
import { LocalCluster, startLocalNats, type LocalServer, type ServiceInstance } from '@ledgerline/cluster';
import { ClusterClients } from '../index.js';

/*
 * Read-only owners as processes (PIP-63): consumers move to the other
 * read-only owner when theirs is killed, a read-only owner whose NATS goes
 * away still delivers, and a writer failover under a tailing read side.
 */

const LEASE_TTL_MS = 3_000;
const GROUP = 'readers';
const WRITER_TOPIC = 'persistent://t/writer/orders';
const MESSAGES = 300;

const text = (s: string) => new TextEncoder().encode(s);
const key = (e: Entry) => `${e.position!.ledgerId}:${e.position!.entryId}`;

describe('read-only owners as processes (PIP-63): Redis, NATS, two writer owners, two read-only owners', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  let readOnly: ServiceInstance[] = [];
  const consumers: TestConsumer[] = [];
  let privateNats: LocalServer | undefined;

  /** The writer owner's TopicsService for a topic (two writer owners share the topics). */
  async function writerFor(topic: string) {
    return clients.topicsAt(await clients.ownerAddress(topic));
  }

  function consumeAt(address: string, subscription = 'read-side', topic = WRITER_TOPIC): TestConsumer {
    const consumer = new TestConsumer(clients.topicsAt(address), {
      case: 'subscribe',
      value: {
        topic,
        subscription,
        type: SubscriptionType.EXCLUSIVE,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    consumers.push(consumer);
    return consumer;
  }

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 2 },
      settings: {
        metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '1000' },
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: String(LEASE_TTL_MS), LEDGERLINE_DRAIN_TIMEOUT_MS: '10000' },
        'readonly-owner': {
          LEDGERLINE_OWNER_GROUP: GROUP,
          LEDGERLINE_LAC_FALLBACK_MS: '50',
          LEDGERLINE_LEASE_TTL_MS: String(LEASE_TTL_MS),
          LEDGERLINE_CURSOR_SYNC_INTERVAL_MS: '20',
        },
      },
    });
    clients = new ClusterClients(cluster);
    // Retention keeps what no subscription consumed: a subscription made later (the second test) reads from the start.
    await clients.createRetainedNamespace('t/writer');
    await clients.admin.createNamespace({ namespace: 't/reader', policies: { ownerGroup: GROUP } });
    await clients.admin.setWriterNamespace({ namespace: 't/reader', writerNamespace: 't/writer' });
    await clients.admin.createTopic({ topic: WRITER_TOPIC });
    readOnly = await Promise.all([cluster.add('readonly-owner'), cluster.add('readonly-owner')]);
  }, 180_000);

  afterAll(async () => {
    for (const consumer of consumers) consumer.close();
    clients?.close();
    await cluster?.stop();
    await privateNats?.stop();
  }, 120_000);

  it('tails the writer, and after kill -9 of its read-only owner resumes on the other: no acked entry redelivered, nothing lost', async () => {
    const route = await clients.lookup.lookupTopic({ topic: WRITER_TOPIC, group: GROUP });
    expect(route.redirectTopic).toBe('persistent://t/reader/orders');
    const serving = readOnly.find((p) => p.address === route.advertisedAddress)!;
    const other = readOnly.find((p) => p !== serving)!;
    const first = consumeAt(serving.address);
    await first.until(() => first.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    first.flow(MESSAGES);

    // The writer keeps publishing while the read side tails.
    const writer = await writerFor(WRITER_TOPIC);
    const publishing = (async () => {
      for (let i = 0; i < MESSAGES; i++) {
        await writer.publishOne({
          message: { topic: WRITER_TOPIC, payload: text(`m${i}`), producerName: 'p', sequenceId: BigInt(i) },
        });
      }
    })();
    await first.until(() => first.entries.length >= MESSAGES / 2, 'half the messages');
    const acked = first.entries.slice(0, MESSAGES / 2);
    first.ack(acked, 1n);
    await first.until(() => first.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    expect(first.texts().slice(0, MESSAGES / 2)).toEqual(Array.from({ length: MESSAGES / 2 }, (_, i) => `m${i}`));

    // kill -9: no drain, its lease lapses after the TTL and the other read-only owner takes the topic.
    await serving.stop('SIGKILL');
    await first.until(() => first.ended, 'the stream to break');
    await publishing;
    await eventually(async () => (await clients.ownerAddress(WRITER_TOPIC, GROUP)) === other.address, {
      attempts: 600,
      intervalMs: 50,
    });
    const second = consumeAt(other.address);
    second.flow(MESSAGES);
    await second.until(() => second.entries.length === MESSAGES / 2, 'the unacked half');
    const ackedKeys = new Set(acked.map(key));
    expect(second.entries.filter((e) => ackedKeys.has(key(e)))).toEqual([]);
    expect([...first.texts().slice(0, MESSAGES / 2), ...second.texts()]).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => `m${i}`),
    );
    // The offsets are the writer's: contiguous from 0.
    const offsets = [...acked, ...second.entries].map((e) => Number(e.firstOffset));
    expect(offsets).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
  }, 180_000);

  it('a read-only owner whose NATS goes away mid-run still delivers every entry (LAC and ledger-list fallbacks)', async () => {
    // Its own nats-server: the writer's notifications never reach it, and then the server is killed outright.
    const nats = await startLocalNats();
    privateNats = nats;
    await clients.admin.createNamespace({ namespace: 't/quiet', policies: { ownerGroup: 'quiet' } });
    await clients.admin.setWriterNamespace({ namespace: 't/quiet', writerNamespace: 't/writer' });
    const quiet = await cluster.add('readonly-owner', {
      LEDGERLINE_OWNER_GROUP: 'quiet',
      LEDGERLINE_NATS_URL: `nats://127.0.0.1:${nats.port}`,
    });
    expect(await clients.ownerAddress(WRITER_TOPIC, 'quiet')).toBe(quiet.address);
    const consumer = consumeAt(quiet.address, 'quiet-side');
    await consumer.until(() => consumer.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    consumer.flow(2 * MESSAGES);
    await consumer.until(() => consumer.entries.length === MESSAGES, 'what the first test published');
    await nats.kill();
    const writer = await writerFor(WRITER_TOPIC);
    for (let i = MESSAGES; i < MESSAGES + 50; i++) {
      await writer.publishOne({
        message: { topic: WRITER_TOPIC, payload: text(`m${i}`), producerName: 'p', sequenceId: BigInt(i) },
      });
    }
    await consumer.until(() => consumer.entries.length === MESSAGES + 50, 'the entries published with NATS gone');
    expect(consumer.texts()).toEqual(Array.from({ length: MESSAGES + 50 }, (_, i) => `m${i}`));
  }, 180_000);

  it('a writer failover (kill -9) while a read-only owner tails: every acknowledged message, once, in order', async () => {
    const topic = 'persistent://t/writer/failover';
    await clients.admin.createTopic({ topic });
    const reader = consumeAt(await clients.ownerAddress(topic, GROUP), 'tail', topic);
    await reader.until(() => reader.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    reader.flow(10_000);
    const victim = await cluster.ownerOf(topic);
    const producer = new RoutingProducer(cluster.byRole('metadata')[0]!.address, topic, 'failover');
    let killed: Promise<unknown> | undefined;
    try {
      await producer.publishRange(0n, 999n, 100, (count) => {
        if (count >= 400 && killed === undefined) killed = victim.stop('SIGKILL');
      });
    } finally {
      producer.close();
    }
    await killed;
    expect(await clients.ownerAddress(topic)).not.toBe(victim.address);
    await reader.until(() => reader.entries.length >= 1_000, 'every message after the failover');
    const ids = reader.entries.flatMap((e) => e.messages.map((m) => m.sequenceId));
    expect(ids).toEqual(Array.from({ length: 1_000 }, (_, i) => BigInt(i)));
    // More than one writer wrote the log: the view followed the fenced ledger and the new owner's ledger.
    expect(new Set(reader.entries.map((e) => e.position!.ledgerId)).size).toBeGreaterThan(1);
  }, 180_000);
});
