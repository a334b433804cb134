import { createClient, ClientReason, type LedgerlineClient, type Message } from './index.js';
import { FakeCluster, waitFor } from './testing/index.js';

const TOPIC = 'persistent://acme/orders/payments';

function text(message: Message): string {
  return Buffer.from(message.payload).toString();
}

describe('consumer', () => {
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

  async function produce(
    count: number,
    batching: false | { maxMessages: number } = false,
    prefix = 'm',
  ): Promise<void> {
    const producer = await client.producer({
      topic: TOPIC,
      batching: batching === false ? false : { ...batching, maxDelayMs: 20 },
    });
    await Promise.all(
      Array.from({ length: count }, (_, index) => producer.send(`${prefix}${index}`, { key: `k${index % 3}` })),
    );
    await producer.close();
  }

  it('reads every entry of a response that carries several, in order', async () => {
    await produce(30);
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 's', initialPosition: 'earliest' });
    const received: Message[] = [];
    for await (const message of consumer) {
      received.push(message);
      if (received.length === 30) break;
    }
    expect(received.map(text)).toEqual(Array.from({ length: 30 }, (_, index) => `m${index}`));
    expect(received.map((message) => message.offset)).toEqual(Array.from({ length: 30 }, (_, index) => BigInt(index)));
    const perResponse = cluster.subscription(TOPIC, 's')!.entriesPerResponse;
    expect(perResponse.reduce((sum, count) => sum + count, 0)).toBe(30);
    expect(Math.max(...perResponse)).toBeGreaterThan(1);
  });

  it('delivers batched and single messages in order with their fields, and acks them', async () => {
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 's', initialPosition: 'earliest' });
    await produce(5, { maxMessages: 3 });
    const received: Message[] = [];
    for await (const message of consumer) {
      received.push(message);
      await consumer.ack(message);
      if (received.length === 5) break;
    }
    expect(received.map(text)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(received.map((message) => message.offset)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(received[1]).toMatchObject({
      key: 'k1',
      redeliveryCount: 0,
      messageId: { entryId: 0n, batchIndex: 1, partition: -1 },
    });
    await waitFor('every entry acknowledged', () => cluster.subscription(TOPIC, 's')!.backlog === 0);
  });

  it('grants flow permits from receiverQueueSize: the owner pushes no more than the application can hold', async () => {
    await produce(30);
    const consumer = await client.subscribe({
      topic: TOPIC,
      subscription: 's',
      initialPosition: 'earliest',
      receiverQueueSize: 6,
    });
    const subscription = cluster.subscription(TOPIC, 's')!;
    await waitFor('a full receiver queue', () => subscription.deliveries.length === 6);
    for (let index = 0; index < 3; index++) await consumer.ack(await consumer.receive());
    await waitFor('half the queue granted again', () => subscription.deliveries.length === 9);
    expect(subscription.consumers[0]!.permits).toBe(0);
  });

  it('redelivers a nacked message and counts the redelivery', async () => {
    await produce(2);
    const consumer = await client.subscribe({
      topic: TOPIC,
      subscription: 's',
      initialPosition: 'earliest',
      nackRedeliveryDelayMs: 0,
    });
    const first = await consumer.receive();
    consumer.nack(first);
    const second = await consumer.receive();
    await consumer.ack(second);
    const again = await consumer.receive();
    expect([text(first), text(second), text(again)]).toEqual(['m0', 'm1', 'm0']);
    expect(again.redeliveryCount).toBe(1);
  });

  it('acknowledges cumulatively up to a message inside a batch (ackReceipts: resolved once applied)', async () => {
    await produce(6, { maxMessages: 3 });
    const consumer = await client.subscribe({
      topic: TOPIC,
      subscription: 's',
      initialPosition: 'earliest',
      ackReceipts: true,
    });
    const received: Message[] = [];
    for (let index = 0; index < 5; index++) received.push(await consumer.receive());
    await consumer.ackCumulative(received[4]!);
    const subscription = cluster.subscription(TOPIC, 's')!;
    expect(subscription.isAcked(0)).toBe(true);
    expect(subscription.isAcked(1)).toBe(false);
    await consumer.ack(await consumer.receive());
    expect(subscription.backlog).toBe(0);
  });

  it('refuses cumulative acks on a Shared subscription', async () => {
    await produce(1);
    const consumer = await client.subscribe({
      topic: TOPIC,
      subscription: 's',
      type: 'Shared',
      initialPosition: 'earliest',
    });
    const message = await consumer.receive();
    await expect(consumer.ackCumulative(message)).rejects.toMatchObject({
      reason: ClientReason.CUMULATIVE_ACK_NOT_ALLOWED,
    });
  });

  it('shares a Shared subscription between two consumers', async () => {
    const one = await client.subscribe({ topic: TOPIC, subscription: 's', type: 'Shared', receiverQueueSize: 2 });
    const two = await client.subscribe({ topic: TOPIC, subscription: 's', type: 'Shared', receiverQueueSize: 2 });
    await produce(8);
    const seen: string[] = [];
    const take = async (consumer: typeof one, count: number) => {
      for (let index = 0; index < count; index++) {
        const message = await consumer.receive();
        seen.push(text(message));
        await consumer.ack(message);
      }
    };
    await Promise.all([take(one, 4), take(two, 4)]);
    expect(seen.sort()).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
  });

  it('fails a second consumer on an Exclusive subscription with the service reason', async () => {
    await client.subscribe({ topic: TOPIC, subscription: 's' });
    await expect(client.subscribe({ topic: TOPIC, subscription: 's' })).rejects.toMatchObject({
      reason: 'CONSUMER_BUSY',
    });
  });

  it.each([
    ['ackReceipts', true],
    ['acks resolved before persistence', false],
  ])(
    'resumes after its owner moves, drops connections and cancels its streams, redelivering no acknowledged message (%s)',
    async (_, ackReceipts) => {
      await produce(40, { maxMessages: 4 });
      const consumer = await client.subscribe({
        topic: TOPIC,
        subscription: 's',
        initialPosition: 'earliest',
        receiverQueueSize: 5,
        ackReceipts,
      });
      const acked: string[] = [];
      for await (const message of consumer) {
        expect(acked).not.toContain(text(message));
        // The ack of message 10 is in flight while the topic moves: it must not come back.
        const ack = consumer.ack(message);
        acked.push(text(message));
        if (acked.length === 11) cluster.moveTopic(TOPIC, 1);
        if (acked.length === 25) cluster.dropConnections(1);
        // A server closing its connections at its drain bound: the stream ends CANCELLED, which the client did not ask for.
        if (acked.length === 32) cluster.cancelStreams(1);
        await ack;
        if (acked.length === 40) break;
      }
      expect(acked).toEqual(Array.from({ length: 40 }, (_, index) => `m${index}`));
      await consumer.flushAcks();
      expect(cluster.subscription(TOPIC, 's')!.backlog).toBe(0);
    },
  );

  it('seeks by offset and by time, and redelivers from there', async () => {
    await produce(5);
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 's', initialPosition: 'earliest' });
    for (let index = 0; index < 5; index++) await consumer.ack(await consumer.receive());
    await consumer.seek({ offset: 3 });
    expect(text(await consumer.receive())).toBe('m3');
    await consumer.seek({ timestamp: 0 });
    expect(text(await consumer.receive())).toBe('m0');
  });

  it('starts a new subscription at an offset', async () => {
    await produce(5);
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 'from-3', initialPosition: { offset: 3 } });
    expect(text(await consumer.receive())).toBe('m3');
  });

  it('consumes every partition of a partitioned topic through one consumer', async () => {
    cluster.createTopic('acme/orders/parted', 3);
    const consumer = await client.subscribe({
      topic: 'acme/orders/parted',
      subscription: 's',
      initialPosition: 'earliest',
    });
    const producer = await client.producer({ topic: 'acme/orders/parted', batching: false });
    await Promise.all(Array.from({ length: 9 }, (_, index) => producer.send(`p${index}`, { key: `key-${index}` })));
    const seen = new Set<string>();
    const partitions = new Set<number>();
    while (seen.size < 9) {
      const message = await consumer.receive();
      seen.add(text(message));
      partitions.add(message.messageId.partition);
      await consumer.ack(message);
    }
    expect(partitions.size).toBeGreaterThan(1);
  });

  it('ends iteration on close and rejects later calls with CONSUMER_CLOSED', async () => {
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 's' });
    const iteration = (async () => {
      const got: Message[] = [];
      for await (const message of consumer) got.push(message);
      return got;
    })();
    await consumer.close();
    await expect(iteration).resolves.toEqual([]);
    await expect(consumer.receive()).rejects.toMatchObject({ reason: ClientReason.CONSUMER_CLOSED });
  });

  it('checks subscribe options and names the one that is wrong', async () => {
    await expect(client.subscribe({ topic: TOPIC, subscription: 's', receiverQueueSize: 0 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: ClientReason.INVALID_OPTION,
      details: { option: 'receiverQueueSize' },
    });
    await expect(client.subscribe({ topic: TOPIC, subscription: 's', ackTimeoutMs: 10 })).rejects.toMatchObject({
      details: { option: 'ackTimeoutMs' },
    });
    await expect(client.subscribe({ topic: TOPIC, subscription: '' })).rejects.toMatchObject({
      details: { option: 'subscription' },
    });
    await expect(
      client.subscribe({ topic: TOPIC, subscription: 's', type: 'Exclusif' as never }),
    ).rejects.toMatchObject({ details: { option: 'type' } });
    await expect(
      client.subscribe({ topic: TOPIC, subscription: 's', ackReceipts: 'yes' as never }),
    ).rejects.toMatchObject({ reason: ClientReason.INVALID_OPTION, details: { option: 'ackReceipts' } });
  });

  it('sends an ack made just before close, and settles its promise', async () => {
    await produce(2);
    const consumer = await client.subscribe({ topic: TOPIC, subscription: 's', initialPosition: 'earliest' });
    const acked = consumer.ack(await consumer.receive());
    await consumer.close();
    await expect(acked).resolves.toBeUndefined();
    expect(cluster.subscription(TOPIC, 's')!.isAcked(0)).toBe(true);
  });

  it('fails an ack the owner never confirmed with CONSUMER_CLOSED when the consumer closes, rather than leaving it waiting (ackReceipts)', async () => {
    await produce(2);
    const quick = createClient({ serviceUrl: cluster.serviceUrl, operationTimeoutMs: 200 });
    try {
      const consumer = await quick.subscribe({
        topic: TOPIC,
        subscription: 's',
        initialPosition: 'earliest',
        ackReceipts: true,
      });
      const first = await consumer.receive();
      cluster.holdAckReceipts = true;
      const unconfirmed = consumer.ack(first);
      await consumer.close();
      await expect(unconfirmed).rejects.toMatchObject({ reason: ClientReason.CONSUMER_CLOSED });
      // The same when the whole client closes under a consumer with an ack in flight.
      const again = await quick.subscribe({
        topic: TOPIC,
        subscription: 's2',
        initialPosition: 'earliest',
        ackReceipts: true,
      });
      const inFlight = again.ack(await again.receive());
      await quick.close();
      await expect(inFlight).rejects.toMatchObject({ reason: ClientReason.CLIENT_CLOSED });
    } finally {
      await quick.close();
    }
  });
});
