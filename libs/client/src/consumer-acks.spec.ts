import {
  createClient,
  ClientReason,
  MAX_UNCONFIRMED_ACKS,
  type Consumer,
  type LedgerlineClient,
  type Message,
  type SubscribeOptions,
} from './index.js';
import { FakeCluster, waitFor } from './testing/index.js';

// When ack(), ackCumulative() and flushAcks() settle, against owners that hold
// back their receipts, lose acks, drop connections or go away.

const TOPIC = 'persistent://acme/orders/acks';
/** How long a promise that should settle at once gets before it counts as pending. */
const AT_ONCE_MS = 1_000;
/** How long a promise that should keep waiting is watched. */
const STILL_WAITING_MS = 100;

const text = (message: Message): string => Buffer.from(message.payload).toString();

type Outcome = 'resolved' | 'rejected' | 'pending';

/** How `promise` has settled after `ms` (it is left running). */
async function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    promise.then(
      (): Outcome => 'resolved',
      (): Outcome => 'rejected',
    ),
    new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve('pending'), ms))),
  ]);
  clearTimeout(timer);
  return outcome;
}

describe('consumer acknowledgements', () => {
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

  async function produce(count: number, batching: false | { maxMessages: number } = false): Promise<void> {
    const producer = await client.producer({
      topic: TOPIC,
      batching: batching === false ? false : { ...batching, maxDelayMs: 5 },
    });
    await Promise.all(Array.from({ length: count }, (_, index) => producer.send(`m${index}`)));
    await producer.close();
  }

  function subscribe(options: Partial<SubscribeOptions> = {}, on = client): Promise<Consumer> {
    return on.subscribe({ topic: TOPIC, subscription: 's', initialPosition: 'earliest', ...options });
  }

  /** Waits until the owners have read `count` Ack commands. */
  const acksReceived = (count: number) =>
    waitFor(`${count} ack commands`, () => cluster.consume.acksReceived.length >= count);

  it('resolves ack and ackCumulative before the owner persisted them; with ackReceipts they wait for the receipt', async () => {
    await produce(4);
    const fast = await subscribe();
    const receipts = await subscribe({ subscription: 'r', ackReceipts: true });
    cluster.holdAckReceipts = true;
    expect(await outcomeWithin(fast.ack(await fast.receive()), AT_ONCE_MS)).toBe('resolved');
    expect(await outcomeWithin(fast.ackCumulative(await fast.receive()), AT_ONCE_MS)).toBe('resolved');
    await acksReceived(2);
    expect(cluster.subscription(TOPIC, 's')!.isAcked(1)).toBe(true);

    const waiting = receipts.ack(await receipts.receive());
    await acksReceived(3);
    expect(cluster.subscription(TOPIC, 'r')!.isAcked(0)).toBe(true);
    expect(await outcomeWithin(waiting, STILL_WAITING_MS)).toBe('pending');
    cluster.consume.releaseAckReceipts();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('resolves flushAcks only once the owner confirmed every ack made before it', async () => {
    await produce(3);
    const consumer = await subscribe();
    expect(await outcomeWithin(consumer.flushAcks(), AT_ONCE_MS)).toBe('resolved');
    cluster.holdAckReceipts = true;
    await consumer.ack(await consumer.receive());
    await consumer.ack(await consumer.receive());
    const flushed = consumer.flushAcks();
    // flushAcks sends the grouped acks at once, without the grouping delay.
    await acksReceived(1);
    expect(await outcomeWithin(flushed, STILL_WAITING_MS)).toBe('pending');
    cluster.consume.releaseAckReceipts();
    await expect(flushed).resolves.toBeUndefined();
    expect(cluster.subscription(TOPIC, 's')!.backlog).toBe(1);
  });

  it('lets the owner confirm with its next cursor snapshot unless someone waits on the receipt', async () => {
    await produce(3);
    const consumer = await subscribe();
    const receipts = await subscribe({ subscription: 'r', ackReceipts: true });
    cluster.holdAckReceipts = true;
    await consumer.ack(await consumer.receive());
    await acksReceived(1);
    const confirmed = receipts.ack(await receipts.receive());
    await acksReceived(2);
    // Nothing waits on the first: its receipt only frees the ack from being sent again.
    expect(cluster.consume.acksReceived.map((ack) => ack.receiptWithNextSnapshot)).toEqual([true, false]);
    // flushAcks with only such a command out asks for a write now with an empty command.
    const flushed = consumer.flushAcks();
    await acksReceived(3);
    expect(cluster.consume.acksReceived[2]).toMatchObject({ entryIds: [], receiptWithNextSnapshot: false });
    // A group flushAcks sends itself asks for the write at once; no empty command beside it.
    await consumer.ack(await consumer.receive());
    const second = consumer.flushAcks();
    await acksReceived(4);
    expect(await outcomeWithin(second, STILL_WAITING_MS)).toBe('pending');
    expect(
      cluster.consume.acksReceived.slice(3).map((ack) => [ack.entryIds.length, ack.receiptWithNextSnapshot]),
    ).toEqual([[1, false]]);
    cluster.consume.releaseAckReceipts();
    await expect(flushed).resolves.toBeUndefined();
    await expect(second).resolves.toBeUndefined();
    await expect(confirmed).resolves.toBeUndefined();
  });

  it('never hands out again a message whose ack resolved when the owner lost the ack, and sends the ack again after the reconnect', async () => {
    await produce(3);
    const consumer = await subscribe({ receiverQueueSize: 10 });
    const first = await consumer.receive();
    // The owner reads the ack and dies before persisting it: the stream drops with no receipt.
    cluster.consume.loseAcks = true;
    expect(await outcomeWithin(consumer.ack(first), AT_ONCE_MS)).toBe('resolved');
    await acksReceived(1);
    const subscription = cluster.subscription(TOPIC, 's')!;
    expect(subscription.isAcked(0)).toBe(false);
    cluster.dropConnections(0);
    // The next owner loses the resent ack too, and delivers entry 0 again: the client drops it.
    await acksReceived(2);
    await waitFor('entry 0 redelivered', () => subscription.deliveries.some((each) => each.redeliveryCount > 0));
    await new Promise((resolve) => setTimeout(resolve, STILL_WAITING_MS));
    cluster.consume.loseAcks = false;
    cluster.dropConnections(0);
    await acksReceived(3);
    const rest = [await consumer.receive(), await consumer.receive()];
    expect(rest.map(text)).toEqual(['m1', 'm2']);
    await consumer.flushAcks();
    expect(subscription.isAcked(0)).toBe(true);
    const [lost, lostAgain, resent] = cluster.consume.acksReceived;
    expect(lost).toMatchObject({ lost: true, entryIds: [0n] });
    expect(lostAgain).toMatchObject({ lost: true, requestId: lost!.requestId, entryIds: [0n] });
    expect(resent).toMatchObject({ lost: false, requestId: lost!.requestId, entryIds: [0n] });
    expect(await outcomeWithin(consumer.receive(), STILL_WAITING_MS)).toBe('pending');
  });

  it('sends the acks of one flush as ranges where consecutive, and single positions otherwise', async () => {
    await produce(10);
    const consumer = await subscribe();
    const messages: Message[] = [];
    for (let index = 0; index < 10; index++) messages.push(await consumer.receive());
    // 0..3 and 6..7 are runs; 9 stands alone; 4, 5 and 8 are not acknowledged.
    for (const index of [6, 0, 1, 2, 3, 9, 7]) await consumer.ack(messages[index]!);
    await consumer.flushAcks();
    const [sent] = cluster.consume.acksReceived;
    expect(sent!.ranges).toEqual([
      [0n, 3n],
      [6n, 7n],
    ]);
    expect(sent!.entryIds).toEqual([9n, 0n, 1n, 2n, 3n, 6n, 7n]);
    expect(cluster.subscription(TOPIC, 's')!.backlog).toBe(3);
    expect([4, 5, 8].some((index) => cluster.subscription(TOPIC, 's')!.isAcked(index))).toBe(false);
  });

  it('sends single positions to an owner that predates ranges, so none of its acks is skipped', async () => {
    cluster.consume.acceptsAckRanges = false;
    await produce(5);
    const consumer = await subscribe();
    for (let index = 0; index < 5; index++) await consumer.ack(await consumer.receive());
    await consumer.flushAcks();
    expect(cluster.consume.acksReceived.flatMap((ack) => ack.ranges)).toEqual([]);
    expect(cluster.consume.acksReceived.flatMap((ack) => ack.entryIds)).toEqual([0n, 1n, 2n, 3n, 4n]);
    expect(cluster.subscription(TOPIC, 's')!.backlog).toBe(0);
  });

  it('sends an ack again after a reconnect as single positions, whatever the new owner takes', async () => {
    await produce(4);
    const consumer = await subscribe({ receiverQueueSize: 10 });
    cluster.consume.loseAcks = true;
    for (let index = 0; index < 4; index++) await consumer.ack(await consumer.receive());
    await acksReceived(1);
    // The topic moves to an owner that predates ranges while the ack sent as a range is unconfirmed.
    cluster.consume.acceptsAckRanges = false;
    cluster.consume.loseAcks = false;
    cluster.dropConnections(0);
    await consumer.flushAcks();
    const [lost, resent] = cluster.consume.acksReceived;
    expect(lost).toMatchObject({ lost: true, ranges: [[0n, 3n]] });
    expect(resent).toMatchObject({ lost: false, requestId: lost!.requestId, ranges: [] });
    expect(resent!.entryIds).toEqual([0n, 1n, 2n, 3n]);
    expect(cluster.subscription(TOPIC, 's')!.backlog).toBe(0);
  });

  it('drops a redelivery queued before the application acknowledged an earlier copy of the message', async () => {
    await produce(2);
    const consumer = await subscribe();
    const first = await consumer.receive();
    consumer.redeliverUnacknowledgedMessages();
    const subscription = cluster.subscription(TOPIC, 's')!;
    await waitFor('both entries delivered again', () => subscription.deliveries.length === 4);
    // Let the redeliveries reach the client's queue before the ack (if they come later, they are dropped on arrival).
    await new Promise((resolve) => setTimeout(resolve, STILL_WAITING_MS));
    await consumer.ack(first);
    const next = [await consumer.receive(), await consumer.receive()];
    expect(next.map(text)).toEqual(['m1', 'm1']);
    expect(await outcomeWithin(consumer.receive(), STILL_WAITING_MS)).toBe('pending');
  });

  it(`resolves at most ${MAX_UNCONFIRMED_ACKS} acks before the owner confirmed them; the next waits for its receipt`, async () => {
    await produce(MAX_UNCONFIRMED_ACKS + 1, { maxMessages: 1_000 });
    const consumer = await subscribe({ receiverQueueSize: 5_000 });
    cluster.holdAckReceipts = true;
    for (let index = 0; index < MAX_UNCONFIRMED_ACKS; index++) {
      expect(await outcomeWithin(consumer.ack(await consumer.receive()), AT_ONCE_MS)).toBe('resolved');
    }
    const over = consumer.ack(await consumer.receive());
    expect(await outcomeWithin(over, STILL_WAITING_MS)).toBe('pending');
    cluster.consume.releaseAckReceipts();
    await expect(over).resolves.toBeUndefined();
  }, 60_000);

  it('keeps reconnecting while close() flushes: an ack the owner lost is sent again and persisted before the stream ends', async () => {
    await produce(1);
    const consumer = await subscribe();
    cluster.consume.loseAcks = true;
    await consumer.ack(await consumer.receive());
    await acksReceived(1);
    const closing = consumer.close();
    cluster.consume.loseAcks = false;
    cluster.dropConnections(0);
    expect(await outcomeWithin(closing, AT_ONCE_MS * 5)).toBe('resolved');
    expect(cluster.subscription(TOPIC, 's')!.isAcked(0)).toBe(true);
  });

  describe('settling within the operation timeout', () => {
    const TIMEOUT_MS = 300;
    let quick: LedgerlineClient;

    beforeEach(() => {
      quick = createClient({
        serviceUrl: cluster.serviceUrl,
        operationTimeoutMs: TIMEOUT_MS,
        reconnectInitialDelayMs: 1,
        reconnectMaxDelayMs: 20,
        maxReconnectAttempts: 10_000,
      });
    });
    afterEach(() => quick.close());

    it('rejects an ack (ackReceipts) and flushAcks the owner never confirms with ACK_NOT_CONFIRMED, and still sends the ack', async () => {
      await produce(2);
      const consumer = await subscribe({ ackReceipts: true }, quick);
      cluster.holdAckReceipts = true;
      const startedAt = Date.now();
      const ack = consumer.ack(await consumer.receive());
      const flushed = consumer.flushAcks();
      expect(await outcomeWithin(ack, TIMEOUT_MS * 5)).toBe('rejected');
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
      await expect(ack).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED', reason: ClientReason.ACK_NOT_CONFIRMED });
      await expect(flushed).rejects.toMatchObject({ reason: ClientReason.ACK_NOT_CONFIRMED });
      // The ack stays queued: once the receipt comes, a new flushAcks resolves.
      const again = consumer.flushAcks();
      cluster.consume.releaseAckReceipts();
      await expect(again).resolves.toBeUndefined();
    });

    it('settles an ack (ackReceipts) and flushAcks whose owner died mid-ack, then close() within its bound', async () => {
      await produce(2);
      const consumer = await subscribe({ ackReceipts: true }, quick);
      const fast = await subscribe({ subscription: 'fast' }, quick);
      const fastMessage = await fast.receive();
      cluster.consume.loseAcks = true;
      const ack = consumer.ack(await consumer.receive());
      expect(await outcomeWithin(fast.ack(fastMessage), AT_ONCE_MS)).toBe('resolved');
      const flushed = fast.flushAcks();
      await acksReceived(2);
      // Every owner goes away: the client keeps reconnecting in vain.
      await cluster.close();
      expect(await outcomeWithin(ack, TIMEOUT_MS * 5)).toBe('rejected');
      expect(await outcomeWithin(flushed, TIMEOUT_MS * 5)).toBe('rejected');
      await expect(ack).rejects.toMatchObject({ reason: ClientReason.ACK_NOT_CONFIRMED });
      const closed = Promise.all([consumer.close(), fast.close()]);
      expect(await outcomeWithin(closed, TIMEOUT_MS * 5)).toBe('resolved');
    });

    it('rejects what still waits when the consumer closes (CONSUMER_CLOSED) or the client closes (CLIENT_CLOSED), after trying to flush', async () => {
      await produce(3);
      const consumer = await subscribe({}, quick);
      cluster.holdAckReceipts = true;
      await consumer.ack(await consumer.receive());
      const flushed = consumer.flushAcks();
      const closing = consumer.close();
      await expect(flushed).rejects.toMatchObject({ reason: ClientReason.CONSUMER_CLOSED });
      await closing;
      // close() sent the grouped ack before it gave up waiting for the receipt.
      expect(cluster.subscription(TOPIC, 's')!.isAcked(0)).toBe(true);
      await expect(consumer.flushAcks()).rejects.toMatchObject({ reason: ClientReason.CONSUMER_CLOSED });

      const other = await subscribe({ subscription: 'other' }, quick);
      await other.ack(await other.receive());
      const pending = other.flushAcks();
      await quick.close();
      await expect(pending).rejects.toMatchObject({ reason: ClientReason.CLIENT_CLOSED });
    });

    it('resolves, on close, an ack (ackReceipts) whose receipt comes while close() waits', async () => {
      await produce(1);
      const consumer = await subscribe({ ackReceipts: true }, quick);
      cluster.holdAckReceipts = true;
      const ack = consumer.ack(await consumer.receive());
      await acksReceived(1);
      const closing = consumer.close();
      cluster.consume.releaseAckReceipts();
      await expect(ack).resolves.toBeUndefined();
      await closing;
    });
  });
});
