import { InitialPosition, SubscriptionType, type Entry } from '@ledgerline/proto';
import { eventually, freePort } from '@ledgerline/testing';
import { ServiceProcess, startWriterCluster, TestConsumer, type WriterCluster } from '@ledgerline/writer-owner/testing';

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

  async function startReadOnly(name: string): Promise<ServiceProcess> {
    const port = await freePort();
    const started = await ServiceProcess.start(
      name,
      'readonly-owner',
      port,
      {
        LEDGERLINE_METADATA_ADDRESS: cluster.metadata[0]!.address,
        LEDGERLINE_REDIS_URL: cluster.redisUrl,
        LEDGERLINE_NATS_URL: cluster.natsUrl,
        LEDGERLINE_REDIS_KEY_PREFIX: cluster.ledgerKeyPrefix,
        LEDGERLINE_ADVERTISED_ADDRESS: `127.0.0.1:${port}`,
        LEDGERLINE_INSTANCE_ID: name,
        LEDGERLINE_OWNER_GROUP: GROUP,
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

  function consumeAt(address: string): TestConsumer {
    const consumer = new TestConsumer(cluster.topicsAt(address), {
      case: 'subscribe',
      value: {
        topic: WRITER_TOPIC,
        subscription: 'read-side',
        type: SubscriptionType.EXCLUSIVE,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    consumers.push(consumer);
    return consumer;
  }

  beforeAll(async () => {
    cluster = await startWriterCluster({ metadataInstances: 1, writers: 1, leaseTtlMs: LEASE_TTL_MS });
    await cluster.admin.createTenant({ tenant: 't' });
    await cluster.admin.createNamespace({ namespace: 't/writer' });
    await cluster.admin.createNamespace({ namespace: 't/reader', policies: { ownerGroup: GROUP } });
    await cluster.admin.setWriterNamespace({ namespace: 't/reader', writerNamespace: 't/writer' });
    await cluster.admin.createTopic({ topic: WRITER_TOPIC });
    await Promise.all([startReadOnly('readonly-0'), startReadOnly('readonly-1')]);
  }, 180_000);

  afterAll(async () => {
    for (const consumer of consumers) consumer.close();
    for (const process of readOnly) await process.stop('SIGTERM');
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
    const writer = cluster.topicsAt(cluster.writers[0]!.address);
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
});
