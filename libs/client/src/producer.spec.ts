import { createClient, ClientReason, keyHashPartition, type LedgerlineClient } from './index.js';
import { FakeCluster } from './testing/index.js';

const TOPIC = 'persistent://acme/orders/payments';

describe('producer', () => {
  let cluster: FakeCluster;
  let client: LedgerlineClient;

  beforeEach(async () => {
    cluster = await FakeCluster.start();
    cluster.createTopic(TOPIC);
    client = createClient({ serviceUrl: cluster.serviceUrl, reconnectInitialDelayMs: 1, reconnectMaxDelayMs: 20 });
  });
  afterEach(async () => {
    await client.close();
    await cluster.close();
  });

  it('batches within maxMessages and resolves each send with its own message id and offset', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: { maxMessages: 4, maxDelayMs: 50 } });
    const receipts = await Promise.all(Array.from({ length: 10 }, (_, index) => producer.send(`m${index}`)));
    expect(cluster.published.map((message) => message.messages.length)).toEqual([4, 4, 2]);
    expect(receipts.map((receipt) => receipt.offset)).toEqual(Array.from({ length: 10 }, (_, index) => BigInt(index)));
    expect(receipts[5]!.messageId).toEqual({ ledgerId: 1n, entryId: 1n, batchIndex: 1, partition: -1 });
    expect(cluster.published.map((message) => message.sequenceId)).toEqual([0n, 4n, 8n]);
    expect(cluster.storedTexts(TOPIC)).toEqual(Array.from({ length: 10 }, (_, index) => `m${index}`));
    await producer.close();
  });

  it('never puts more than batching.maxBytes in a batch', async () => {
    const producer = await client.producer({
      topic: TOPIC,
      batching: { maxBytes: 300, maxMessages: 100, maxDelayMs: 50 },
    });
    await Promise.all(Array.from({ length: 12 }, () => producer.send(new Uint8Array(100))));
    const sizes = cluster.published.map((message) =>
      message.messages.reduce((sum, each) => sum + each.payload.length, 0),
    );
    expect(sizes.every((size) => size <= 300)).toBe(true);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(1200);
  });

  it('sends each message as its own entry with batching off, with key, properties and event time', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: false, producerName: 'p1', initialSequenceId: 7 });
    const receipt = await producer.send('hello', { key: 'k', properties: { a: 'b' }, eventTime: 1234 });
    await producer.send('again');
    expect(receipt).toEqual({
      messageId: { ledgerId: 1n, entryId: 0n, batchIndex: -1, partition: -1 },
      offset: 0n,
      duplicate: false,
    });
    expect(cluster.published[0]).toMatchObject({
      producerName: 'p1',
      sequenceId: 7n,
      key: 'k',
      properties: { a: 'b' },
      eventTimeMs: 1234n,
    });
    expect(cluster.published[1]).toMatchObject({ sequenceId: 8n, messages: [] });
  });

  it('resends entries whose receipts were lost; deduplication keeps each stored once', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: { maxMessages: 3, maxDelayMs: 1 } });
    cluster.loseReceipts(TOPIC, 2);
    const sends = Array.from({ length: 30 }, (_, index) => producer.send(`m${index}`));
    const receipts = await Promise.all(sends);
    expect(cluster.storedTexts(TOPIC)).toEqual(Array.from({ length: 30 }, (_, index) => `m${index}`));
    expect(receipts.some((receipt) => receipt.duplicate)).toBe(true);
  });

  it('follows a topic that moves to another owner, drops connections and cancels its streams while producing, storing every message once', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: false });
    const sends: Promise<unknown>[] = [];
    for (let index = 0; index < 200; index++) {
      sends.push(producer.send(`m${index}`));
      if (index === 60) cluster.moveTopic(TOPIC, 1);
      if (index === 120) cluster.dropConnections(1);
      if (index === 160) cluster.cancelStreams(1);
      if (index % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(sends);
    expect(cluster.storedTexts(TOPIC)).toEqual(Array.from({ length: 200 }, (_, index) => `m${index}`));
    expect(cluster.openStreams(0)).toBe(0);
  });

  it('fails a message the owner refuses and goes on with the rest', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: false });
    cluster.refuseNext(TOPIC, 'INVALID_ARGUMENT', 'MESSAGE_TOO_LARGE');
    const first = producer.send('refused');
    const second = producer.send('stored');
    await expect(first).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'MESSAGE_TOO_LARGE' });
    await expect(second).resolves.toMatchObject({ offset: 0n });
  });

  it('routes keys to partitions as the Java client does, and spreads keyless messages', async () => {
    cluster.createTopic('acme/orders/parted', 3);
    const producer = await client.producer({ topic: 'acme/orders/parted', batching: false });
    const keys = ['hello', 'abcdef', 'order-17', 'é', ''];
    const receipts = await Promise.all(keys.map((key) => producer.send(key, { key })));
    expect(receipts.map((receipt) => receipt.messageId.partition)).toEqual(keys.map((key) => keyHashPartition(key, 3)));
    // Java: "hello".hashCode() = 99162322; "abcdef".hashCode() = -1424385949, & MAX_VALUE = 723097699.
    expect(keyHashPartition('hello', 4)).toBe(2);
    expect(keyHashPartition('abcdef', 3)).toBe(1);
    const spread = await Promise.all(Array.from({ length: 6 }, (_, index) => producer.send(`x${index}`)));
    expect(new Set(spread.map((receipt) => receipt.messageId.partition))).toEqual(new Set([0, 1, 2]));
  });

  it('looks a topic up once and reuses the answer', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: false });
    for (let index = 0; index < 5; index++) await producer.send(`m${index}`);
    expect(cluster.lookups).toBe(1);
  });

  it('gives up after maxReconnectAttempts with RECONNECT_GAVE_UP when no owner answers', async () => {
    const bounded = createClient({
      serviceUrl: cluster.serviceUrl,
      maxReconnectAttempts: 3,
      reconnectInitialDelayMs: 1,
      reconnectMaxDelayMs: 5,
    });
    const producer = await bounded.producer({ topic: TOPIC, batching: false });
    await producer.send('first');
    cluster.dropConnections(0);
    cluster.moveTopic(TOPIC, 5);
    await expect(producer.send('lost')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      reason: ClientReason.RECONNECT_GAVE_UP,
    });
    await bounded.close();
  });

  it('rejects sends after close with PRODUCER_CLOSED, and after client.close with CLIENT_CLOSED', async () => {
    const producer = await client.producer({ topic: TOPIC });
    await producer.send('one');
    await producer.close();
    await expect(producer.send('two')).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: ClientReason.PRODUCER_CLOSED,
    });
    const other = await client.producer({ topic: TOPIC });
    await client.close();
    await expect(other.send('three')).rejects.toMatchObject({ reason: ClientReason.CLIENT_CLOSED });
    await expect(client.producer({ topic: TOPIC })).rejects.toMatchObject({ reason: ClientReason.CLIENT_CLOSED });
  });

  it('refuses a topic that does not exist with the service reason', async () => {
    await expect(client.producer({ topic: 'acme/orders/missing' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
    });
  });

  it('waits for room beyond maxPendingMessages instead of queueing without bound', async () => {
    const producer = await client.producer({ topic: TOPIC, batching: false, maxPendingMessages: 2 });
    const receipts = await Promise.all(Array.from({ length: 20 }, (_, index) => producer.send(`m${index}`)));
    expect(receipts.map((receipt) => receipt.offset)).toEqual(Array.from({ length: 20 }, (_, index) => BigInt(index)));
  });
});
