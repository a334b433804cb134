import { InitialPosition, SubscriptionType, type Entry } from '@ledgerline/proto';
import { eventually, freePort, startNats, type ServerProcess } from '@ledgerline/testing';
import {
  RoutingProducer,
  ServiceProcess,
  startWriterCluster,
  TestConsumer,
  type WriterCluster,
} from '@ledgerline/writer-owner/testing';

const LEASE_TTL_MS = 3_000;
const GROUP = 'readers';
const WRITER_TOPIC = 'persistent://t/writer/orders';
const MESSAGES = 300;

const text = (s: string) => new TextEncoder().encode(s);
const key = (e: Entry) => `${e.position!.ledgerId}:${e.position!.entryId}`;

describe('read-only owners as processes (PIP-63): Redis, NATS, a writer owner, two read-only owners', () => {
  let cluster: WriterCluster;
  const readOnly: ServiceProcess[] = [];
  const consumers: TestConsumer[] = [];

  let privateNats: ServerProcess | undefined;

  async function startReadOnly(name: string, group = GROUP, natsUrl?: string): Promise<ServiceProcess> {
    const port = await freePort();
    const started = await ServiceProcess.start(
      name,
      'readonly-owner',
      port,
      {
        LEDGERLINE_METADATA_ADDRESS: cluster.metadata[0]!.address,
        LEDGERLINE_REDIS_URL: cluster.redisUrl,
        LEDGERLINE_NATS_URL: natsUrl ?? cluster.natsUrl,
        LEDGERLINE_REDIS_KEY_PREFIX: cluster.ledgerKeyPrefix,
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${port}`,
        LEDGERLINE_INSTANCE_ID: name,
        LEDGERLINE_OWNER_GROUP: group,
        LEDGERLINE_LAC_FALLBACK_MS: '50',
        LEDGERLINE_LEASE_TTL_MS: String(LEASE_TTL_MS),
        LEDGERLINE_CURSOR_SYNC_INTERVAL_MS: '20',
        LEDGERLINE_METRICS_PORT: '0',
        LEDGERLINE_LOG_LEVEL: 'warn',
      },
      { readyLine: /read-only owner listening/ },
    );
    readOnly.push(started);
    return started;
  }

  /** The writer owner's TopicsService for a topic (two writer owners share the topics). */
  async function writerFor(topic: string) {
    return cluster.topicsAt((await cluster.lookup.lookupTopic({ topic })).advertisedAddress);
  }

  function consumeAt(address: string, subscription = 'read-side', topic = WRITER_TOPIC): TestConsumer {
    const consumer = new TestConsumer(cluster.topicsAt(address), {
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
    cluster = await startWriterCluster({ metadataInstances: 1, writers: 2, leaseTtlMs: LEASE_TTL_MS });
    await cluster.admin.createTenant({ tenant: 't' });
    // Retention keeps what no subscription consumed: a subscription made later (the second test) reads from the start.
    await cluster.admin.createNamespace({
      namespace: 't/writer',
      policies: { retentionTimeMinutes: -1n, retentionSizeMb: -1n },
    });
    await cluster.admin.createNamespace({ namespace: 't/reader', policies: { ownerGroup: GROUP } });
    await cluster.admin.setWriterNamespace({ namespace: 't/reader', writerNamespace: 't/writer' });
    await cluster.admin.createTopic({ topic: WRITER_TOPIC });
    await Promise.all([startReadOnly('readonly-0'), startReadOnly('readonly-1')]);
  }, 180_000);

  afterAll(async () => {
    for (const consumer of consumers) consumer.close();
    for (const process of readOnly) await process.stop('SIGTERM');
    await privateNats?.stop();
    await cluster?.close();
  }, 120_000);

  it('tails the writer, and after kill -9 of its read-only owner resumes on the other: no acked entry redelivered, nothing lost', async () => {
    const route = await cluster.lookup.lookupTopic({ topic: WRITER_TOPIC, group: GROUP });
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
    await eventually(
      async () =>
        (await cluster.lookup.lookupTopic({ topic: WRITER_TOPIC, group: GROUP })).advertisedAddress === other.address,
      { attempts: 600, intervalMs: 50 },
    );
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
    privateNats = await startNats();
    await cluster.admin.createNamespace({ namespace: 't/quiet', policies: { ownerGroup: 'quiet' } });
    await cluster.admin.setWriterNamespace({ namespace: 't/quiet', writerNamespace: 't/writer' });
    const quiet = await startReadOnly('readonly-quiet', 'quiet', privateNats.url);
    const route = await cluster.lookup.lookupTopic({ topic: WRITER_TOPIC, group: 'quiet' });
    expect(route.advertisedAddress).toBe(quiet.address);
    const consumer = consumeAt(quiet.address, 'quiet-side');
    await consumer.until(() => consumer.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    consumer.flow(2 * MESSAGES);
    await consumer.until(() => consumer.entries.length === MESSAGES, 'what the first test published');
    await privateNats.kill();
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
    await cluster.admin.createTopic({ topic });
    const route = await cluster.lookup.lookupTopic({ topic, group: GROUP });
    const reader = consumeAt(route.advertisedAddress, 'tail', topic);
    await reader.until(() => reader.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    reader.flow(10_000);
    const ownerAddress = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    const victim = cluster.writers.find((w) => w.address === ownerAddress)!;
    const producer = new RoutingProducer(cluster.metadata[0]!.address, topic, 'failover');
    let killed: Promise<unknown> | undefined;
    try {
      await producer.publishRange(0n, 999n, 100, (count) => {
        if (count >= 400 && killed === undefined) killed = victim.stop('SIGKILL');
      });
    } finally {
      producer.close();
    }
    await killed;
    expect((await cluster.lookup.lookupTopic({ topic })).advertisedAddress).not.toBe(ownerAddress);
    await reader.until(() => reader.entries.length >= 1_000, 'every message after the failover');
    const ids = reader.entries.flatMap((e) => e.messages.map((m) => m.sequenceId));
    expect(ids).toEqual(Array.from({ length: 1_000 }, (_, i) => BigInt(i)));
    // More than one writer wrote the log: the view followed the fenced ledger and the new owner's ledger.
    expect(new Set(reader.entries.map((e) => e.position!.ledgerId)).size).toBeGreaterThan(1);
  }, 180_000);
});
