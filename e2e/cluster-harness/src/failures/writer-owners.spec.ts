import { refusal } from '@ledgerline/testing';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { RoutingProducer } from '@ledgerline/writer-owner/testing';
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients, takeoverSettings } from '../index.js';

/*
 * Writer owners as processes (two metadata instances, two writer owners, over
 * the cluster's redis-server and nats-server): NOT_OWNER routing, a SIGKILL of
 * the owner under a deduplicating stream, and a SIGTERM hand-over.
 */

const LEASE_TTL_MS = 3_000;

describe('writer owners as processes: Redis, NATS, two metadata instances, two writer owners', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;

  function subscriber(address: string, topic: string): TestConsumer {
    return new TestConsumer(clients.topicsAt(address), {
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
  async function storedSequence(address: string, topic: string): Promise<bigint[]> {
    const ids: bigint[] = [];
    let offset = 0n;
    for (;;) {
      const page = await clients.topicsAt(address).fetchByOffset({ topic, offset, maxEntries: 500 });
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

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 2 },
      settings: takeoverSettings(LEASE_TTL_MS),
    });
    clients = new ClusterClients(cluster);
    await clients.createRetainedNamespace('t/ns');
  }, 180_000);
  afterAll(async () => {
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  it('serves a topic from the owner the lookup names, and refuses it elsewhere with NOT_OWNER and the address', async () => {
    const topic = 'persistent://t/ns/routed';
    await clients.admin.createTopic({ topic });
    const owner = await clients.ownerAddress(topic);
    const other = cluster
      .byRole('writer-owner')
      .map((writer) => writer.address)
      .find((address) => address !== owner)!;
    const refused = await refusal(
      clients.topicsAt(other).publishOne({ message: { topic, payload: new Uint8Array([1]) } }),
    );
    expect([refused.code, refused.reason, refused.details['owner_address']]).toEqual([
      'FAILED_PRECONDITION',
      'NOT_OWNER',
      owner,
    ]);
    const stored = await clients.topicsAt(owner).publishOne({ message: { topic, payload: new Uint8Array([1]) } });
    expect(stored.receipt!.firstOffset).toBe(0n);
    expect((await clients.lookup.lookupTopic({ topic })).owned).toBe(true);
  });

  it('loses no acknowledged message and duplicates none when the owner is killed mid-stream (SIGKILL)', async () => {
    const topic = 'persistent://t/ns/failover';
    await clients.admin.createTopic({ topic });
    const victim = await cluster.ownerOf(topic);
    const ownerAddress = victim.address;
    const producer = new RoutingProducer(cluster.byRole('metadata')[1]!.address, topic, 'failover-producer');
    await producer.publishRange(0n, 999n, 200);
    // A consumer acknowledges the first half of what is there, with a receipt (the cursor persisted it).
    const before = subscriber(ownerAddress, topic);
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
    const survivor = await clients.ownerAddress(topic);
    expect(survivor).not.toBe(ownerAddress);
    const ids = await storedSequence(survivor, topic);
    // Exactly once, in order: the producer re-sent what was unanswered and deduplication dropped what had landed.
    expect(ids).toEqual(Array.from({ length: Number(total) }, (_, i) => BigInt(i)));
    expect(producer.receipts.size).toBe(Number(total));
    producer.close();
    // The consumer resumes on the new owner with exactly the unacknowledged rest.
    const after = subscriber(survivor, topic);
    after.flow(5_000);
    await after.until(() => after.entries.length === 2_500, 'the unacknowledged rest');
    expect(after.texts()).toEqual(Array.from({ length: 2_500 }, (_, i) => String(500 + i)));
    const stats = await clients.topicsAt(survivor).getTopicStats({ topic });
    expect(stats.subscriptions.find((s) => s.name === 'half')!.backlogMessages).toBe(2_500n);
    after.close();
    // Two writer owners again, so the hand-over below has somewhere to go.
    await cluster.add('writer-owner');
  }, 180_000);

  it('hands topics over on SIGTERM with nothing beyond a retry', async () => {
    const topic = 'persistent://t/ns/handover';
    await clients.admin.createTopic({ topic });
    const leaving = await cluster.ownerOf(topic);
    const ownerAddress = leaving.address;
    const producer = new RoutingProducer(cluster.byRole('metadata')[0]!.address, topic, 'handover-producer');
    let stopped: Promise<boolean> | undefined;
    await producer.publishRange(0n, 1_999n, 100, (count) => {
      if (count >= 500 && stopped === undefined) stopped = leaving.stop('SIGTERM');
    });
    // It left on its own within the bound, with status 0 (its last lines show when not).
    expect(await stopped).toBe(true);
    const exited = await leaving.exited;
    expect({ ...exited, output: exited?.code === 0 ? '' : leaving.output.slice(-2_000) }).toEqual({
      code: 0,
      signal: null,
      output: '',
    });
    const next = await clients.ownerAddress(topic);
    expect(next).not.toBe(ownerAddress);
    const ids = await storedSequence(next, topic);
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
