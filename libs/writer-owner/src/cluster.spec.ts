import { LedgerlineError } from '@ledgerline/errors';
import { startWriterCluster, type WriterCluster } from './testing/cluster.js';
import { RoutingProducer } from './testing/routing-producer.js';
import { TestConsumer } from './testing/test-consumer.js';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';

const LEASE_TTL_MS = 3_000;

async function refusal(call: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await call;
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('expected the call to fail');
}

function subscriber(cluster: WriterCluster, address: string, topic: string): TestConsumer {
  return new TestConsumer(cluster.topicsAt(address), {
    case: 'subscribe',
    value: {
      topic,
      subscription: 'half',
      type: SubscriptionType.EXCLUSIVE,
      consumerName: 'c',
      initialPosition: InitialPosition.EARLIEST,
    },
  });
}

/** Every stored message's sequence id, in offset order, read back with FetchByOffset. */
async function storedSequence(cluster: WriterCluster, address: string, topic: string): Promise<bigint[]> {
  const ids: bigint[] = [];
  let offset = 0n;
  for (;;) {
    const page = await cluster.topicsAt(address).fetchByOffset({ topic, offset, maxEntries: 500 });
    for (const entry of page.entries) {
      for (const message of entry.messages) {
        expect(message.offset).toBe(offset);
        ids.push(message.sequenceId);
        offset++;
      }
    }
    if (page.entries.length === 0 || offset >= page.nextOffset) return ids;
  }
}

describe('writer owners as processes: Redis, NATS, two metadata instances, two writer owners', () => {
  let cluster: WriterCluster;
  beforeAll(async () => {
    cluster = await startWriterCluster({ metadataInstances: 2, writers: 2, leaseTtlMs: LEASE_TTL_MS });
    await cluster.admin.createTenant({ tenant: 't' });
    // Retention keeps what no subscription consumed, so the tests can read the whole log back.
    await cluster.admin.createNamespace({
      namespace: 't/ns',
      policies: { retentionTimeMinutes: -1n, retentionSizeMb: -1n },
    });
  }, 180_000);
  afterAll(async () => cluster?.close(), 120_000);

  it('serves a topic from the owner the lookup names, and refuses it elsewhere with NOT_OWNER and the address', async () => {
    const topic = 'persistent://t/ns/routed';
    await cluster.admin.createTopic({ topic });
    const owner = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    const other = cluster.writers.map((w) => w.address).find((address) => address !== owner)!;
    const refused = await refusal(
      cluster.topicsAt(other).publishOne({ message: { topic, payload: new Uint8Array([1]) } }),
    );
    expect([refused.code, refused.reason, refused.details['owner_address']]).toEqual([
      'FAILED_PRECONDITION',
      'NOT_OWNER',
      owner,
    ]);
    const stored = await cluster.topicsAt(owner).publishOne({ message: { topic, payload: new Uint8Array([1]) } });
    expect(stored.receipt!.firstOffset).toBe(0n);
    expect((await cluster.lookup.lookupTopic({ topic })).owned).toBe(true);
  });

  it('loses no acknowledged message and duplicates none when the owner is killed mid-stream (SIGKILL)', async () => {
    const topic = 'persistent://t/ns/failover';
    await cluster.admin.createTopic({ topic });
    const ownerAddress = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    const victim = cluster.writers.find((w) => w.address === ownerAddress)!;
    const producer = new RoutingProducer(cluster.metadata[1]!.address, topic, 'failover-producer');
    await producer.publishRange(0n, 999n, 200);
    // A consumer acknowledges the first half of what is there, with a receipt (the cursor persisted it).
    const before = subscriber(cluster, ownerAddress, topic);
    before.flow(1_000);
    await before.until(() => before.entries.length === 1_000, 'the first thousand');
    before.ack(before.entries.slice(0, 500), 1n);
    await before.until(() => before.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    const total = 3_000n;
    let killed: Promise<unknown> | undefined;
    await producer.publishRange(1_000n, total - 1n, 200, (count) => {
      if (count >= 1_500 && killed === undefined) killed = victim.stop('SIGKILL');
    });
    await killed;
    await before.until(() => before.ended, 'the old stream to end with its owner');
    const survivor = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    expect(survivor).not.toBe(ownerAddress);
    const ids = await storedSequence(cluster, survivor, topic);
    // Exactly once, in order: the producer re-sent what was unanswered and deduplication dropped what had landed.
    expect(ids).toEqual(Array.from({ length: Number(total) }, (_, i) => BigInt(i)));
    expect(producer.receipts.size).toBe(Number(total));
    producer.close();
    // The consumer resumes on the new owner with exactly the unacknowledged rest.
    const after = subscriber(cluster, survivor, topic);
    after.flow(5_000);
    await after.until(() => after.entries.length === 2_500, 'the unacknowledged rest');
    expect(after.texts()).toEqual(Array.from({ length: 2_500 }, (_, i) => String(500 + i)));
    const stats = await cluster.topicsAt(survivor).getTopicStats({ topic });
    expect(stats.subscriptions.find((s) => s.name === 'half')!.backlogMessages).toBe(2_500n);
    after.close();
    cluster.writers.splice(cluster.writers.indexOf(victim), 1, await cluster.startWriter('writer-restarted', 1));
  }, 180_000);

  it('hands topics over on SIGTERM with nothing beyond a retry', async () => {
    const topic = 'persistent://t/ns/handover';
    await cluster.admin.createTopic({ topic });
    const ownerAddress = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    const leaving = cluster.writers.find((w) => w.address === ownerAddress)!;
    const producer = new RoutingProducer(cluster.metadata[0]!.address, topic, 'handover-producer');
    let stopped: Promise<number | null> | undefined;
    await producer.publishRange(0n, 1_999n, 100, (count) => {
      if (count >= 500 && stopped === undefined) stopped = leaving.stop('SIGTERM');
    });
    expect(await stopped).toBe(0);
    const next = (await cluster.lookup.lookupTopic({ topic })).advertisedAddress;
    expect(next).not.toBe(ownerAddress);
    const ids = await storedSequence(cluster, next, topic);
    expect(ids).toEqual(Array.from({ length: 2_000 }, (_, i) => BigInt(i)));
    // What the producer saw: the stream ending, or a refusal naming the topic unloaded or the owner draining.
    for (const reason of producer.retriedReasons) {
      expect(['STREAM_ENDED', 'TOPIC_UNLOADED', 'OWNER_NOT_SERVING', 'NOT_OWNER', 'TRANSPORT_UNAVAILABLE']).toContain(
        reason,
      );
    }
    producer.close();
  }, 120_000);
});
