import { createClient, type LedgerlineClient } from './index.js';
import { MAX_COALESCED_BYTES } from './partition-producer.js';
import { FakeCluster } from './testing/index.js';

const TOPIC = 'persistent://acme/orders/payments';

describe('producer: coalescing entries queued in one turn into one Publish request', () => {
  let cluster: FakeCluster | undefined;
  let client: LedgerlineClient | undefined;

  async function start(maxMessagesPerPublishRequest?: number) {
    cluster = await FakeCluster.start(
      maxMessagesPerPublishRequest === undefined ? {} : { maxMessagesPerPublishRequest },
    );
    cluster.createTopic(TOPIC);
    client = createClient({ serviceUrl: cluster.serviceUrl, reconnectInitialDelayMs: 1, reconnectMaxDelayMs: 20 });
    const producer = await client.producer({ topic: TOPIC, batching: false, producerName: 'p', initialSequenceId: 0 });
    // The first answer tells the producer how many entries the owner reads per request.
    await producer.send('first');
    return { cluster, producer };
  }
  afterEach(async () => {
    await client?.close();
    await cluster?.close();
    client = undefined;
    cluster = undefined;
  });

  it('sends the entries queued in one turn as one request, each with its own sequence id, entry and receipt', async () => {
    const { cluster, producer } = await start();
    const receipts = await Promise.all(Array.from({ length: 10 }, (_, index) => producer.send(`m${index}`)));
    expect(cluster.entriesPerRequest).toEqual([1, 10]);
    expect(cluster.published.map((message) => message.sequenceId)).toEqual(
      Array.from({ length: 11 }, (_, index) => BigInt(index)),
    );
    expect(
      receipts.map((receipt) => [receipt.offset, receipt.messageId.entryId, receipt.messageId.batchIndex]),
    ).toEqual(Array.from({ length: 10 }, (_, index) => [BigInt(index + 1), BigInt(index + 1), -1]));
    expect(cluster.storedTexts(TOPIC)).toEqual(['first', ...Array.from({ length: 10 }, (_, index) => `m${index}`)]);
  });

  it('sends one entry per request to an owner that never announced coalescing', async () => {
    const { cluster, producer } = await start(0);
    await Promise.all(Array.from({ length: 5 }, (_, index) => producer.send(`m${index}`)));
    expect(cluster.entriesPerRequest).toEqual([1, 1, 1, 1, 1, 1]);
    expect(cluster.storedTexts(TOPIC)).toHaveLength(6);
  });

  it('keeps within the count the owner announced and within the byte bound', async () => {
    const { cluster, producer } = await start(3);
    await Promise.all(Array.from({ length: 8 }, (_, index) => producer.send(`m${index}`)));
    expect(cluster.entriesPerRequest).toEqual([1, 3, 3, 2]);
    const large = new Uint8Array(Math.floor(MAX_COALESCED_BYTES / 2.5));
    await Promise.all(Array.from({ length: 5 }, () => producer.send(large)));
    // Two such entries fit the byte bound, a third does not.
    expect(cluster.entriesPerRequest.slice(4)).toEqual([2, 2, 1]);
    expect(cluster.storedTexts(TOPIC)).toHaveLength(14);
  });

  it('fails only the refused entry in the middle of a coalesced request', async () => {
    const { cluster, producer } = await start();
    cluster.refuseSequenceId(TOPIC, 3n, 'INVALID_ARGUMENT', 'MESSAGE_TOO_LARGE');
    const sends = Array.from({ length: 5 }, (_, index) => producer.send(`m${index}`));
    const settled = await Promise.allSettled(sends);
    expect(cluster.entriesPerRequest).toEqual([1, 5]);
    expect(settled.map((each) => each.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ reason: 'MESSAGE_TOO_LARGE' });
    expect(cluster.storedTexts(TOPIC)).toEqual(['first', 'm0', 'm1', 'm3', 'm4']);
  });

  it('resends a coalesced request whose answer was lost; deduplication stores each entry once', async () => {
    const { cluster, producer } = await start();
    cluster.loseReceipts(TOPIC, 1);
    const receipts = await Promise.all(Array.from({ length: 20 }, (_, index) => producer.send(`m${index}`)));
    expect(cluster.storedTexts(TOPIC)).toEqual(['first', ...Array.from({ length: 20 }, (_, index) => `m${index}`)]);
    expect(receipts[0]!.duplicate).toBe(true);
    expect(receipts.map((receipt) => receipt.offset)).toEqual(
      Array.from({ length: 20 }, (_, index) => BigInt(index + 1)),
    );
  });
});
