import { LedgerlineError } from '@ledgerline/errors';
import { CursorCodecReason } from '@ledgerline/cursor-codec';
import {
  InMemorySource,
  ManualScheduler,
  RecordingSink,
  settle,
  type TestEntry,
} from '@ledgerline/subscriptions/testing';
import { SubscriptionReason } from './errors.js';
import { Subscription } from './subscription.js';
import { SubscriptionType, type ConsumerOptions, type SubscriptionType as Type } from './types.js';
import type { SubscriptionLimits } from './limits.js';

/** The writer owner's reason for an unloaded topic (this pure lib does not import it). */
const OwnerReason = { TOPIC_UNLOADED: 'TOPIC_UNLOADED' } as const;

const open: Subscription<TestEntry>[] = [];

function setup(limits: Partial<SubscriptionLimits> = {}) {
  const source = new InMemorySource();
  const scheduler = new ManualScheduler();
  const sub = new Subscription<TestEntry>({ name: 'sub', source, scheduler, limits });
  open.push(sub);
  return { source, scheduler, sub };
}

function connect(
  sub: Subscription<TestEntry>,
  name: string,
  type: Type,
  extra: Partial<ConsumerOptions<TestEntry>> = {},
) {
  const sink = new RecordingSink<TestEntry>();
  const consumer = sub.addConsumer({ name, type, sink, ...extra });
  return { sink, consumer };
}

function thrown(fn: () => unknown): LedgerlineError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LedgerlineError) return err;
    throw err;
  }
  throw new Error('expected a LedgerlineError');
}

afterEach(async () => {
  for (const sub of open.splice(0)) await sub.close();
});

describe('Exclusive', () => {
  it('refuses a second consumer with CONSUMER_BUSY, and takes one again once the first left', async () => {
    const { sub } = setup();
    const first = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    const err = thrown(() => connect(sub, 'b', SubscriptionType.EXCLUSIVE));
    expect(err.code).toBe('FAILED_PRECONDITION');
    expect(err.reason).toBe(SubscriptionReason.CONSUMER_BUSY);
    first.consumer.close();
    expect(connect(sub, 'b', SubscriptionType.EXCLUSIVE).consumer.active).toBe(true);
  });

  it('refuses a consumer of another type while consumers are connected', () => {
    const { sub } = setup();
    connect(sub, 'a', SubscriptionType.SHARED);
    const err = thrown(() => connect(sub, 'b', SubscriptionType.EXCLUSIVE));
    expect(err.reason).toBe(SubscriptionReason.SUBSCRIPTION_TYPE_MISMATCH);
  });

  it('delivers in order as far as permits go, then waits for more', async () => {
    const { source, sub } = setup();
    source.appendMany(['k', 'k', 'k', 'k', 'k']);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    await settle(sub);
    expect(sink.deliveries).toHaveLength(0);
    consumer.flow(3);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2]);
    expect(consumer.stats().availablePermits).toBe(0);
    consumer.flow(10);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3, 4]);
    expect(sub.state).toBe('waiting-for-entries');
    source.append('k');
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(sink.deliveries.every((d) => d.redeliveryCount === 0)).toBe(true);
  });

  it('counts permits in messages: a batch of 5 takes 5', async () => {
    const { source, sub } = setup();
    source.append('k', 5);
    source.append('k', 1);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    consumer.flow(5);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0]);
    consumer.flow(1);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1]);
  });

  it('reads batches by how many messages an entry holds, so a read fetches what the permits cover', async () => {
    const { source, sub } = setup();
    for (let i = 0; i < 100; i++) source.append('k', 10);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    for (let round = 0; round < 50; round++) {
      consumer.flow(20);
      await settle(sub);
    }
    expect(sink.entryIds()).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Only the first read, before any batch size was seen, fetched more than the permits covered (20 entries for 2).
    expect(source.newEntriesRead).toBe(100);
    expect(source.positionsReread).toBe(18);
  });

  it('acks individually and cumulatively; what is acked is not redelivered', async () => {
    const { source, sub } = setup();
    source.appendMany(['a', 'b', 'c', 'd']);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    consumer.flow(10);
    await settle(sub);
    await consumer.acknowledge({ positions: [{ ledgerId: 1, entryId: 2 }] });
    expect(consumer.stats().unackedMessages).toBe(3);
    await consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: 1 } });
    expect(consumer.stats().unackedMessages).toBe(1);
    expect(source.markDeletePosition()).toEqual({ ledgerId: 1, entryId: 2 });
    consumer.redeliverUnacknowledged();
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3, 3]);
    expect(sink.deliveries[4]?.redeliveryCount).toBe(1);
    expect((await sub.stats()).redeliveredMessages).toBe(1);
  });

  it('checks an ack whole before applying any of it', async () => {
    const { source, sub } = setup();
    source.appendMany(['a', 'b']);
    const { consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    consumer.flow(2);
    await settle(sub);
    await expect(
      consumer.acknowledge({
        positions: [
          { ledgerId: 1, entryId: 0 },
          { ledgerId: -1, entryId: 0 },
        ],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', reason: CursorCodecReason.INVALID_POSITION });
    expect(source.isAcknowledged({ ledgerId: 1, entryId: 0 })).toBe(false);
    expect(consumer.stats().unackedMessages).toBe(2);
  });

  it('leaves acknowledged batch indexes out of a redelivery and counts only the rest as unacked', async () => {
    const { source, sub } = setup();
    source.append('k', 4);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    consumer.flow(10);
    await settle(sub);
    expect(sink.deliveries[0]?.batchIndexes).toBeUndefined();
    await consumer.acknowledge({
      batchIndexAcks: [{ position: { ledgerId: 1, entryId: 0 }, ackedIndexes: [0, 2], batchSize: 4 }],
    });
    expect(consumer.stats().unackedMessages).toBe(2);
    consumer.redeliverUnacknowledged();
    await settle(sub);
    expect(sink.deliveries[1]?.batchIndexes).toEqual([1, 3]);
    await consumer.acknowledge({
      batchIndexAcks: [{ position: { ledgerId: 1, entryId: 0 }, ackedIndexes: [1, 3], batchSize: 4 }],
    });
    expect(consumer.stats().unackedMessages).toBe(0);
    expect(source.allAcknowledged()).toBe(true);
  });

  it('rejects bad permits and bad options with INVALID_ARGUMENT, and calls after close with CONSUMER_CLOSED', () => {
    const { sub } = setup();
    const { consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    for (const permits of [0, -1, 1.5, Number.NaN, 2 ** 40]) {
      expect(thrown(() => consumer.flow(permits)).reason).toBe(SubscriptionReason.INVALID_PERMITS);
    }
    expect(thrown(() => connect(sub, '', SubscriptionType.SHARED)).reason).toBe(
      SubscriptionReason.INVALID_CONSUMER_OPTIONS,
    );
    expect(thrown(() => connect(sub, 'x', 'Queue' as Type)).reason).toBe(SubscriptionReason.INVALID_SUBSCRIPTION_TYPE);
    consumer.close();
    expect(thrown(() => consumer.flow(1)).reason).toBe(SubscriptionReason.CONSUMER_CLOSED);
    expect(thrown(() => connect(sub, 'b', SubscriptionType.EXCLUSIVE, { ackTimeoutMs: 5 })).reason).toBe(
      SubscriptionReason.INVALID_CONSUMER_OPTIONS,
    );
  });
});

describe('Shared', () => {
  it('settles what acked ranges name, short or longer than what is pending, and hands the rest on when the consumer leaves', async () => {
    const { source, sub } = setup();
    for (let i = 0; i < 40; i++) source.append();
    const a = connect(sub, 'a', SubscriptionType.SHARED);
    a.consumer.flow(10);
    await settle(sub);
    expect(a.sink.entryIds()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // 2..5 is walked entry by entry; 8..39 names more entries than are pending, so the pending ones are matched instead.
    await a.consumer.acknowledge({
      ranges: [
        { ledgerId: 1, firstEntryId: 2, lastEntryId: 5 },
        { ledgerId: 1, firstEntryId: 8, lastEntryId: 39 },
      ],
    });
    expect(a.consumer.stats().unackedMessages).toBe(4);
    a.consumer.close();
    const b = connect(sub, 'b', SubscriptionType.SHARED);
    b.consumer.flow(100);
    await settle(sub);
    expect(b.sink.entryIds()).toEqual([0, 1, 6, 7]);
    expect((await sub.stats()).backlogMessages).toBe(4);
  });

  it('spreads entries round robin over consumers with permits, and reads each entry once', async () => {
    const { source, sub } = setup();
    source.appendMany(Array.from({ length: 30 }, () => undefined));
    const a = connect(sub, 'a', SubscriptionType.SHARED);
    const b = connect(sub, 'b', SubscriptionType.SHARED);
    const c = connect(sub, 'c', SubscriptionType.SHARED);
    a.consumer.flow(10);
    b.consumer.flow(5);
    c.consumer.flow(15);
    await settle(sub);
    expect(a.sink.deliveries).toHaveLength(10);
    expect(b.sink.deliveries).toHaveLength(5);
    expect(c.sink.deliveries).toHaveLength(15);
    const all = [...a.sink.entryIds(), ...b.sink.entryIds(), ...c.sink.entryIds()].sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(source.newEntriesRead).toBe(30);
    // Round robin: the first three entries went to three different consumers.
    expect(new Set([a.sink.entryIds()[0], b.sink.entryIds()[0], c.sink.entryIds()[0]])).toEqual(new Set([0, 1, 2]));
  });

  it('keeps serving a consumer with permits while another has none (a slow consumer holds up nobody)', async () => {
    const { source, sub } = setup();
    const slow = connect(sub, 'slow', SubscriptionType.SHARED);
    const fast = connect(sub, 'fast', SubscriptionType.SHARED);
    slow.consumer.flow(1);
    fast.consumer.flow(1000);
    source.appendMany(Array.from({ length: 200 }, () => undefined));
    await settle(sub);
    expect(slow.sink.deliveries).toHaveLength(1);
    expect(fast.sink.deliveries).toHaveLength(199);
  });

  it('rejects a cumulative ack with INVALID_ARGUMENT / CUMULATIVE_ACK_NOT_ALLOWED', async () => {
    const { source, sub } = setup();
    source.appendMany(['a', 'b']);
    const { consumer } = connect(sub, 'a', SubscriptionType.SHARED);
    consumer.flow(2);
    await settle(sub);
    await expect(consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: 1 } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: SubscriptionReason.CUMULATIVE_ACK_NOT_ALLOWED,
    });
    expect(source.isAcknowledged({ ledgerId: 1, entryId: 0 })).toBe(false);
  });

  it('gives what a leaving consumer had not acknowledged to the others', async () => {
    const { source, sub } = setup();
    source.appendMany(Array.from({ length: 4 }, () => undefined));
    const a = connect(sub, 'a', SubscriptionType.SHARED);
    a.consumer.flow(4);
    await settle(sub);
    await a.consumer.acknowledge({ positions: [{ ledgerId: 1, entryId: 1 }] });
    const b = connect(sub, 'b', SubscriptionType.SHARED);
    b.consumer.flow(10);
    a.consumer.close();
    await settle(sub);
    expect(b.sink.entryIds()).toEqual([0, 2, 3]);
    expect(b.sink.deliveries.map((d) => d.redeliveryCount)).toEqual([1, 1, 1]);
  });
});

describe('unacked bounds', () => {
  it('pause a consumer at its bound, visibly in stats, and resume it when acks bring it to half', async () => {
    const { source, sub } = setup({ maxUnackedMessagesPerConsumer: 4 });
    source.appendMany(Array.from({ length: 10 }, () => undefined));
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.SHARED);
    consumer.flow(100);
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3]);
    expect(consumer.stats().blockedOnUnacked).toBe(true);
    await consumer.acknowledge({ positions: [{ ledgerId: 1, entryId: 0 }] });
    await settle(sub);
    expect(sink.deliveries).toHaveLength(4);
    await consumer.acknowledge({ positions: [{ ledgerId: 1, entryId: 1 }] });
    await settle(sub);
    expect(consumer.stats().blockedOnUnacked).toBe(true);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('pause the whole subscription at its bound and resume on acks', async () => {
    const { source, sub } = setup({ maxUnackedMessagesPerSubscription: 6 });
    source.appendMany(Array.from({ length: 20 }, () => undefined));
    const a = connect(sub, 'a', SubscriptionType.SHARED);
    const b = connect(sub, 'b', SubscriptionType.SHARED);
    a.consumer.flow(100);
    b.consumer.flow(100);
    await settle(sub);
    expect(a.sink.deliveries.length + b.sink.deliveries.length).toBe(6);
    const stats = await sub.stats();
    expect(stats.blockedOnUnacked).toBe(true);
    expect(stats.unackedMessages).toBe(6);
    expect(stats.dispatchState).toBe('waiting-for-consumers');
    await a.consumer.acknowledge({ positions: a.sink.deliveries.map((d) => d.entry.position) });
    await b.consumer.acknowledge({ positions: b.sink.deliveries.map((d) => d.entry.position) });
    await settle(sub);
    expect(a.sink.deliveries.length + b.sink.deliveries.length).toBe(12);
  });
});

describe('seek', () => {
  it('moves the subscription and delivers again from there', async () => {
    const { source, sub } = setup();
    source.appendMany(['a', 'b', 'c', 'd']);
    const { sink, consumer } = connect(sub, 'a', SubscriptionType.EXCLUSIVE);
    consumer.flow(100);
    await settle(sub);
    await consumer.acknowledge({ cumulative: { ledgerId: 1, entryId: 3 } });
    expect(await sub.seek({ position: { ledgerId: 1, entryId: 1 } })).toEqual({ ledgerId: 1, entryId: 1 });
    await settle(sub);
    expect(sink.entryIds()).toEqual([0, 1, 2, 3, 1, 2, 3]);
    expect((await sub.stats()).backlogMessages).toBe(3);
  });
});

describe('close', () => {
  it('closes every consumer with the reason given and refuses new ones', async () => {
    const { sub } = setup();
    const a = connect(sub, 'a', SubscriptionType.SHARED);
    const reason = new LedgerlineError('UNAVAILABLE', OwnerReason.TOPIC_UNLOADED, 'topic unloaded');
    await sub.close(reason);
    expect(a.sink.closedWith).toBe(reason);
    expect(sub.state).toBe('closed');
    expect(thrown(() => connect(sub, 'b', SubscriptionType.SHARED)).reason).toBe(
      SubscriptionReason.SUBSCRIPTION_CLOSED,
    );
  });
});

describe('a subscription without consumers', () => {
  it.each([SubscriptionType.SHARED, SubscriptionType.EXCLUSIVE, SubscriptionType.KEY_SHARED])(
    '%s: stops waiting on its source once the last consumer leaves, and reads again when one comes',
    async (type) => {
      const { source, sub } = setup();
      source.appendMany(['a', 'b']);
      const first = connect(sub, 'a', type);
      first.consumer.flow(10);
      await settle(sub);
      expect(first.sink.deliveries).toHaveLength(2);
      await first.consumer.acknowledge({ positions: first.sink.deliveries.map((d) => d.entry.position) });
      await settle(sub);
      // Tailing with permits left: the reader waits for new entries.
      expect(source.waiting).toBe(true);
      first.consumer.close();
      await settle(sub);
      // Nobody to deliver to: the wait on the source (a read waiter on the managed ledger) is given up.
      expect(source.waiting).toBe(false);
      expect(sub.state).toBe('waiting-for-consumers');
      source.append('c');
      const second = connect(sub, 'b', type);
      second.consumer.flow(10);
      await settle(sub);
      expect(second.sink.deliveries.map((d) => d.entry.key)).toEqual(['c']);
    },
  );
});
