import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import {
  InMemorySource,
  ManualScheduler,
  RecordingSink,
  settle,
  type TestEntry,
} from '@ledgerline/subscriptions/testing';
import { DeliveryCounts } from './delivery-counts.js';
import { SubscriptionReason } from './errors.js';
import { DEAD_LETTER_RETRY_DELAY_MS, MAX_EMPTY_WAKEUPS, RATE_WINDOW_MS, READ_RETRY_BASE_DELAY_MS } from './limits.js';
import { Subscription, type SubscriptionOptions } from './subscription.js';
import { SubscriptionType, type ConsumerOptions, type DeadLetterPolicy } from './types.js';

/** The managed ledger's reason for a cursor another owner fenced (this pure lib does not import it). */
const StoreReason = { CURSOR_FENCED: 'CURSOR_FENCED' } as const;

const open: Subscription<TestEntry>[] = [];

function setup(options: Partial<SubscriptionOptions<TestEntry>> = {}) {
  const source = new InMemorySource();
  const scheduler = new ManualScheduler();
  const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler, ...options });
  open.push(sub);
  return { source, scheduler, sub };
}

function connect(sub: Subscription<TestEntry>, extra: Partial<ConsumerOptions<TestEntry>> = {}, name = 'a') {
  const sink = new RecordingSink<TestEntry>();
  const consumer = sub.addConsumer({ name, type: SubscriptionType.SHARED, sink, ...extra });
  consumer.flow(1000);
  return { sink, consumer };
}

const at = (entryId: number) => ({ ledgerId: 1, entryId });

afterEach(async () => {
  for (const sub of open.splice(0)) await sub.close();
});

describe('ack timeout', () => {
  it('redelivers what is still unacknowledged once the timeout passes, counting redeliveries', async () => {
    const { source, scheduler, sub } = setup();
    source.appendMany(['a', 'b', 'c']);
    const { sink, consumer } = connect(sub, { ackTimeoutMs: 5_000 });
    await settle(sub);
    expect(sink.drain().map((d) => d.redeliveryCount)).toEqual([0, 0, 0]);
    await consumer.acknowledge({ positions: [at(1)] });
    scheduler.advance(4_999);
    await settle(sub);
    expect(sink.deliveries).toHaveLength(0);
    scheduler.advance(1);
    await settle(sub);
    expect(sink.drain().map((d) => [d.entry.position.entryId, d.redeliveryCount])).toEqual([
      [0, 1],
      [2, 1],
    ]);
    await consumer.acknowledge({ positions: [at(0)] });
    scheduler.advance(5_000);
    await settle(sub);
    expect(sink.drain().map((d) => [d.entry.position.entryId, d.redeliveryCount])).toEqual([[2, 2]]);
    expect(consumer.stats().redeliveredMessages).toBe(3);
  });

  it('redelivers to another consumer when the first has no permits left', async () => {
    const { source, scheduler, sub } = setup();
    source.append('a');
    const sink = new RecordingSink<TestEntry>();
    sub.addConsumer({ name: 'a', type: SubscriptionType.SHARED, sink, ackTimeoutMs: 1_000 }).flow(1);
    await settle(sub);
    const b = connect(sub, {}, 'b');
    scheduler.advance(1_000);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0]);
    expect(b.sink.deliveries.map((d) => [d.entry.position.entryId, d.redeliveryCount])).toEqual([[0, 1]]);
  });
});

describe('negative acks', () => {
  it('redeliver after the nack delay, and at once with a delay of 0', async () => {
    const { source, scheduler, sub } = setup();
    source.appendMany(['a', 'b', 'c']);
    const { sink, consumer } = connect(sub, { nackRedeliveryDelayMs: 1_000 });
    await settle(sub);
    sink.drain();
    consumer.nack([at(1), at(2)]);
    scheduler.advance(999);
    await settle(sub);
    expect(sink.deliveries).toHaveLength(0);
    scheduler.advance(1);
    await settle(sub);
    expect(sink.drain().map((d) => [d.entry.position.entryId, d.redeliveryCount])).toEqual([
      [1, 1],
      [2, 1],
    ]);

    const immediate = setup();
    immediate.source.append('a');
    const now = connect(immediate.sub, { nackRedeliveryDelayMs: 0 });
    await settle(immediate.sub);
    now.consumer.nack([at(0)]);
    await settle(immediate.sub);
    expect(now.sink.deliveries.map((d) => d.redeliveryCount)).toEqual([0, 1]);
  });

  it('ignore positions the consumer does not hold', async () => {
    const { source, scheduler, sub } = setup();
    source.appendMany(['a', 'b']);
    const { sink, consumer } = connect(sub, { nackRedeliveryDelayMs: 0 });
    await settle(sub);
    await consumer.acknowledge({ positions: [at(0)] });
    consumer.nack([at(0), at(7)]);
    scheduler.advance(1);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1]);
  });
});

describe('dead letters', () => {
  const policy: DeadLetterPolicy = { maxRedeliveries: 2, topic: 'persistent://t/n/x-sub-DLQ' };

  it('go to the dead-letter topic after 1 + maxRedeliveries deliveries, and are acknowledged then', async () => {
    const published: [number, DeadLetterPolicy][] = [];
    const { source, sub } = setup({
      deadLetter: async (entry, p) => {
        published.push([entry.position.entryId, p]);
      },
    });
    source.appendMany(['a', 'b']);
    const { sink, consumer } = connect(sub, { nackRedeliveryDelayMs: 0, deadLetterPolicy: policy });
    for (let round = 0; round < 4; round++) {
      await settle(sub);
      consumer.nack([at(0)]);
    }
    await settle(sub);
    expect(sink.deliveries.filter((d) => d.entry.position.entryId === 0).map((d) => d.redeliveryCount)).toEqual([
      0, 1, 2,
    ]);
    expect(published).toEqual([[0, policy]]);
    expect(source.isAcknowledged(at(0))).toBe(true);
    expect(source.isAcknowledged(at(1))).toBe(false);
    expect(consumer.stats().unackedMessages).toBe(1);
  });

  it('are tried again when the publish fails, and never redelivered meanwhile', async () => {
    let failures = 1;
    const errors: LedgerlineError[] = [];
    const { source, scheduler, sub } = setup({
      deadLetter: async () => {
        if (failures-- > 0) throw new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'down');
      },
      onError: (e) => errors.push(e),
    });
    source.append('a');
    const { sink, consumer } = connect(sub, { nackRedeliveryDelayMs: 0, deadLetterPolicy: { maxRedeliveries: 1 } });
    await settle(sub);
    consumer.nack([at(0)]);
    await settle(sub);
    consumer.nack([at(0)]);
    await settle(sub);
    expect(errors.map((e) => e.reason)).toEqual(['STORE_UNAVAILABLE']);
    expect(source.isAcknowledged(at(0))).toBe(false);
    scheduler.advance(DEAD_LETTER_RETRY_DELAY_MS);
    await settle(sub);
    expect(source.isAcknowledged(at(0))).toBe(true);
    expect(sink.deliveries.map((d) => d.redeliveryCount)).toEqual([0, 1]);
  });

  it('are refused at subscribe when the owner cannot publish them', () => {
    const { sub } = setup();
    expect(() => connect(sub, { deadLetterPolicy: policy })).toThrow(
      expect.objectContaining({ reason: SubscriptionReason.DEAD_LETTER_UNSUPPORTED }),
    );
  });
});

describe('read failures', () => {
  it('are retried after a delay when retryable', async () => {
    const errors: LedgerlineError[] = [];
    const { source, scheduler, sub } = setup({ onError: (e) => errors.push(e) });
    source.failReads = new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'down');
    source.append('a');
    const { sink } = connect(sub);
    await settle(sub);
    expect(errors.map((e) => e.reason)).toEqual(['STORE_UNAVAILABLE']);
    source.failReads = undefined;
    scheduler.advance(READ_RETRY_BASE_DELAY_MS);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0]);
  });

  it('close the subscription and its consumers when not retryable', async () => {
    const { source, sub } = setup();
    const fenced = new LedgerlineError('ABORTED', StoreReason.CURSOR_FENCED, 'another owner took the topic');
    source.failReads = fenced;
    source.append('a');
    const { sink } = connect(sub);
    await settle(sub);
    expect(sink.closedWith).toBe(fenced);
    expect(sub.state).toBe('closed');
  });
});

describe('an entry the source fails to read again', () => {
  it('stays due for redelivery, in order, and is retried after a pause', async () => {
    const errors: LedgerlineError[] = [];
    const { source, scheduler, sub } = setup({ onError: (e) => errors.push(e) });
    source.appendMany(['a', 'b', 'c']);
    const sink = new RecordingSink<TestEntry>();
    const consumer = sub.addConsumer({ name: 'a', type: SubscriptionType.EXCLUSIVE, sink, nackRedeliveryDelayMs: 0 });
    consumer.flow(100);
    await settle(sub);
    const readPositions = source.readPositions.bind(source);
    let failures = 1;
    // A source that swallows a read failure and leaves the position out.
    source.readPositions = async (positions) =>
      (await readPositions(positions)).filter((e) => e.position.entryId !== 0 || failures-- <= 0);
    consumer.nack([at(0), at(1)]);
    await settle(sub);
    expect(errors.map((e) => e.reason)).toEqual([SubscriptionReason.ENTRIES_NOT_READ]);
    expect(sink.entryIds()).toEqual([0, 1, 2]);
    scheduler.advance(READ_RETRY_BASE_DELAY_MS);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 0, 1]);
  });
});

describe('a source that wakes its reader with nothing to read', () => {
  it('does not spin dispatch: it pauses between rounds and reports it', async () => {
    const errors: LedgerlineError[] = [];
    const { source, scheduler, sub } = setup({ onError: (e) => errors.push(e) });
    let reads = 0;
    source.readEntries = async () => {
      reads++;
      return [];
    };
    source.waitForEntries = () => Promise.resolve();
    connect(sub);
    await settle(sub);
    expect(sub.state).toBe('retrying');
    expect(reads).toBe(MAX_EMPTY_WAKEUPS + 1);
    expect(errors.map((e) => e.reason)).toEqual([SubscriptionReason.SOURCE_WAKES_WITHOUT_ENTRIES]);
    scheduler.advance(READ_RETRY_BASE_DELAY_MS);
    await settle(sub);
    expect(reads).toBe(2 * (MAX_EMPTY_WAKEUPS + 1));
  });
});

describe('stats', () => {
  it('report rates, unacked, permits and redeliveries per consumer and subscription', async () => {
    const { source, scheduler, sub } = setup();
    for (let i = 0; i < 20; i++) source.append(undefined, 2, 500);
    const { consumer } = connect(sub);
    await settle(sub);
    scheduler.advance(RATE_WINDOW_MS);
    const stats = await sub.stats();
    const seconds = RATE_WINDOW_MS / 1000;
    expect(stats).toMatchObject({
      name: 'sub',
      type: SubscriptionType.SHARED,
      backlogMessages: 40,
      unackedMessages: 40,
      blockedOnUnacked: false,
      msgRateOut: 40 / seconds,
      msgThroughputOut: (20 * 500) / seconds,
      redeliveredMessages: 0,
      dispatchState: 'waiting-for-entries',
    });
    expect(stats.consumers).toEqual([consumer.stats()]);
    expect(consumer.stats()).toMatchObject({ name: 'a', unackedMessages: 40, availablePermits: 960, active: true });
    scheduler.advance(2 * RATE_WINDOW_MS);
    expect((await sub.stats()).msgRateOut).toBe(0);
  });
});

describe('DeliveryCounts', () => {
  it('forgets the position delivered longest ago past its bound', () => {
    const counts = new DeliveryCounts(2);
    expect(counts.recordDelivery(at(0))).toBe(0);
    expect(counts.recordDelivery(at(0))).toBe(1);
    counts.recordDelivery(at(1));
    counts.recordDelivery(at(2));
    expect(counts.size).toBe(2);
    expect(counts.get(at(0))).toBe(0);
    expect(counts.get(at(2))).toBe(1);
  });
});

describe('a nack', () => {
  it('does not cut short a later delivery of the same position', async () => {
    const { source, scheduler, sub } = setup();
    source.append('a');
    const { sink, consumer } = connect(sub, { nackRedeliveryDelayMs: 1_000 });
    await settle(sub);
    consumer.nack([at(0)]);
    // Redelivered before the nack falls due: the nack was about the first delivery, not this one.
    consumer.redeliverUnacknowledged();
    await settle(sub);
    scheduler.advance(1_000);
    await settle(sub);
    expect(sink.deliveries.map((d) => d.redeliveryCount)).toEqual([0, 1]);
  });
});
