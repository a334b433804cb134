import { LedgerlineError } from '@ledgerline/errors';
import { InitialPosition, SubscriptionType, type TopicsService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';
import { eventually } from '@ledgerline/testing';
import { OwnerReason } from '@ledgerline/ownership';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { QUIET_GROUP, READER_GROUP, startReadOnlyHarness, type ReadOnlyHarness } from './testing/index.js';

const text = (s: string) => new TextEncoder().encode(s);

describe('read-only owner (PIP-63, in process)', () => {
  let harness: ReadOnlyHarness;
  const consumers: TestConsumer[] = [];

  beforeAll(async () => {
    harness = await startReadOnlyHarness();
    await harness.addReadOnlyOwner();
  });
  afterEach(async () => {
    for (const c of consumers.splice(0)) {
      c.close();
      await c.until(() => c.ended, 'the stream to end');
    }
  });
  afterAll(async () => harness.close());

  async function publish(topic: string, from: number, count: number): Promise<void> {
    for (let i = from; i < from + count; i++) {
      // A named producer: its deduplication snapshots move the writer's dedup cursor, which trimming also waits for.
      await harness.writerTopics.publishOne({
        message: { topic, payload: text(`m${i}`), key: `k${i % 3}`, producerName: 'p', sequenceId: BigInt(i) },
      });
    }
  }

  /** Retention is 0: a subscription made before publishing keeps the entries (the trimming test relies on it). */
  async function subscribeEarly(topic: string, ...subscriptions: string[]): Promise<void> {
    for (const subscription of subscriptions) {
      await harness.writerCursors.createCursor({
        topic,
        subscription,
        start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
      });
    }
  }

  function consumer(
    client: Client<typeof TopicsService>,
    topic: string,
    subscription: string,
    type = SubscriptionType.EXCLUSIVE,
    name = 'c',
  ): TestConsumer {
    const made = new TestConsumer(client, {
      case: 'subscribe',
      value: { topic, subscription, type, consumerName: name, initialPosition: InitialPosition.EARLIEST },
    });
    consumers.push(made);
    return made;
  }

  it('lookup through the read-only group redirects to a read-only owner and the reader topic', async () => {
    const { writerTopic, readerTopic } = await harness.createTopic('lookup');
    const answer = await harness.lookup.lookupTopic({ topic: writerTopic, group: READER_GROUP });
    expect(answer.redirectTopic).toBe(readerTopic);
    expect(answer.advertisedAddress).toBe(harness.readOnly[0]!.owner.identity.advertisedAddress);
    const direct = await harness.lookup.lookupTopic({ topic: writerTopic });
    expect(direct.redirectTopic).toBe('');
    expect(direct.advertisedAddress).toBe(harness.writer.owner.identity.advertisedAddress);
  });

  it('delivers what the writer stored, in order, with the writer offsets, while the writer keeps publishing', async () => {
    const { writerTopic } = await harness.createTopic('tail');
    await subscribeEarly(writerTopic, 'read-side', 'writer-side');
    await publish(writerTopic, 0, 12);
    // Clients keep the writer topic's name after the redirect; the read-only owner resolves it.
    const reader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'read-side');
    reader.flow(1_000);
    await reader.until(() => reader.entries.length === 12, '12 entries');
    await publish(writerTopic, 12, 13);
    await reader.until(() => reader.entries.length === 25, '25 entries');
    expect(reader.texts()).toEqual(Array.from({ length: 25 }, (_, i) => `m${i}`));
    const onWriter = consumer(harness.writerTopics, writerTopic, 'writer-side');
    onWriter.flow(1_000);
    await onWriter.until(() => onWriter.entries.length === 25, '25 entries on the writer');
    expect(reader.entries.map((e) => [e.position, e.firstOffset, e.lastOffset])).toEqual(
      onWriter.entries.map((e) => [e.position, e.firstOffset, e.lastOffset]),
    );
    // More than one ledger was read (maxEntriesPerLedger 5): the view followed the rollovers.
    expect(new Set(reader.entries.map((e) => e.position!.ledgerId)).size).toBeGreaterThan(3);
  });

  it('refuses every write with READONLY_TOPIC naming the writer topic', async () => {
    const { writerTopic, readerTopic } = await harness.createTopic('refused');
    for (const topic of [writerTopic, readerTopic]) {
      const refused = await harness.readOnlyTopics[0]!.publishOne({ message: { topic, payload: text('x') } }).then(
        () => undefined,
        (error: unknown) => LedgerlineError.from(error),
      );
      expect(refused).toMatchObject({ code: 'FAILED_PRECONDITION', reason: OwnerReason.READONLY_TOPIC });
      expect(refused?.details['writer_topic']).toBe(writerTopic);
      // Deleting records is a write too (Kafka's DeleteRecords): it belongs to the writer group.
      const deleteRefused = await harness.readOnlyTopics[0]!.deleteRecords({ topic, beforeOffset: 0n }).then(
        () => undefined,
        (error: unknown) => LedgerlineError.from(error),
      );
      expect(deleteRefused).toMatchObject({ code: 'FAILED_PRECONDITION', reason: OwnerReason.READONLY_TOPIC });
    }
  });

  it('keeps the cursor on the writer: acks land there, and a writer-side consumer resumes after them', async () => {
    const { writerTopic } = await harness.createTopic('acks');
    await subscribeEarly(writerTopic, 'sub');
    await publish(writerTopic, 0, 10);
    const reader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'sub');
    reader.flow(10);
    await reader.until(() => reader.entries.length === 10, '10 entries');
    reader.ack(reader.entries.slice(0, 6), 1n);
    await reader.until(() => reader.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    const cursor = await harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'sub' });
    expect(cursor.cursor?.markDelete).toEqual(reader.entries[5]!.position);
    reader.close();
    await reader.until(() => reader.ended, 'the read side to leave');
    const writerSide = consumer(harness.writerTopics, writerTopic, 'sub');
    writerSide.flow(100);
    await writerSide.until(() => writerSide.entries.length === 4, 'the 4 unacked');
    expect(writerSide.texts()).toEqual(['m6', 'm7', 'm8', 'm9']);
  });

  it('takes acks as ranges and sends them on to the writer as ranges; a bad range changes nothing', async () => {
    const { writerTopic } = await harness.createTopic('ack-ranges');
    await subscribeEarly(writerTopic, 'sub');
    await publish(writerTopic, 0, 10);
    const reader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'sub');
    reader.flow(10);
    await reader.until(() => reader.entries.length === 10, '10 entries');
    expect(reader.events[0]?.event).toMatchObject({ case: 'subscribed', value: { acceptsAckRanges: true } });
    const at = (index: number) => reader.entries[index]!.position!;
    const range = (first: number, last: number) => ({
      ledgerId: at(first).ledgerId,
      firstEntryId: at(first).entryId,
      lastEntryId: at(last).entryId,
    });
    // Ledgers hold 5 entries: m1..m4 end the first, m5..m6 start the second.
    expect(at(4).ledgerId).not.toBe(at(5).ledgerId);
    reader.send({ case: 'ack', value: { ranges: [range(1, 4), range(5, 6)], positions: [at(8)], requestId: 1n } });
    await reader.until(() => reader.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');
    const cursor = await harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'sub' });
    expect(cursor.cursor?.ackedRanges).toEqual([
      expect.objectContaining(range(1, 4)),
      expect.objectContaining(range(5, 6)),
      expect.objectContaining(range(8, 8)),
    ]);
    // A range past the entries the view has: refused whole, the position beside it not applied.
    reader.send({ case: 'ack', value: { positions: [at(0)], ranges: [{ ...range(9, 9), lastEntryId: 99n }] } });
    await reader.until(() => reader.ended, 'the stream to end');
    expect(reader.error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'POSITION_OUT_OF_RANGE' });
    const writerSide = consumer(harness.writerTopics, writerTopic, 'sub');
    writerSide.flow(100);
    await writerSide.until(() => writerSide.entries.length === 3, 'the 3 unacked');
    expect(writerSide.texts()).toEqual(['m0', 'm7', 'm9']);
  });

  it('seek resets the cursor on the writer by epoch, and unsubscribe deletes it there', async () => {
    const { writerTopic } = await harness.createTopic('seek');
    await subscribeEarly(writerTopic, 'sub');
    await publish(writerTopic, 0, 6);
    const readOnly = harness.readOnlyTopics[0]!;
    const missing = await readOnly
      .seek({ topic: writerTopic, subscription: 'nobody', target: { case: 'offset', value: 0n } })
      .then(
        () => undefined,
        (error: unknown) => LedgerlineError.from(error),
      );
    expect(missing?.code).toBe('NOT_FOUND');
    const reader = consumer(readOnly, writerTopic, 'sub');
    reader.flow(100);
    await reader.until(() => reader.entries.length === 6, '6 entries');
    // Not all of it: the first ledger (5 entries) stays unconsumed, so the writer keeps it (retention 0).
    reader.ack(reader.entries.slice(0, 3), 1n);
    await reader.until(() => reader.events.some((e) => e.event.case === 'ackReceipt'), 'receipt');
    const before = await harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'sub' });
    await readOnly.seek({ topic: writerTopic, subscription: 'sub', target: { case: 'offset', value: 1n } });
    // Back to offset 1: m1 and m2 were acknowledged before the reset and come again, with the rest.
    await reader.until(() => reader.entries.length === 11, 'offsets 1..5 again');
    expect(reader.texts().slice(6)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    const after = await harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'sub' });
    expect(after.cursor!.resetEpoch).toBe(before.cursor!.resetEpoch + 1n);
    reader.close();
    await reader.until(() => reader.ended, 'the consumer to leave');
    await readOnly.unsubscribe({ topic: writerTopic, subscription: 'sub' });
    const gone = await harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'sub' }).then(
      () => undefined,
      (error: unknown) => LedgerlineError.from(error),
    );
    expect(gone?.code).toBe('NOT_FOUND');
  });

  it('merges acks from the writer and a read-only owner on one Shared subscription by union', async () => {
    const { writerTopic } = await harness.createTopic('union');
    await subscribeEarly(writerTopic, 'shared');
    await publish(writerTopic, 0, 20);
    const onWriter = consumer(harness.writerTopics, writerTopic, 'shared', SubscriptionType.SHARED, 'w');
    const onReader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'shared', SubscriptionType.SHARED, 'r');
    onWriter.flow(10);
    onReader.flow(10);
    await onWriter.until(() => onWriter.entries.length === 10, '10 on the writer');
    await onReader.until(() => onReader.entries.length >= 10, '10 on the read side');
    onWriter.ack(onWriter.entries, 1n);
    onReader.ack(onReader.entries, 2n);
    await onWriter.until(() => onWriter.events.some((e) => e.event.case === 'ackReceipt'), 'writer receipt');
    await onReader.until(() => onReader.events.some((e) => e.event.case === 'ackReceipt'), 'reader receipt');
    // Every entry was acked somewhere: once merged, the writer's cursor has consumed all of them.
    const acked = new Set(
      [...onWriter.entries, ...onReader.entries].map((e) => `${e.position!.ledgerId}:${e.position!.entryId}`),
    );
    await eventually(async () => {
      const stats = await harness.writerTopics.getTopicStats({ topic: writerTopic });
      return stats.subscriptions.find((s) => s.name === 'shared')?.backlogMessages === BigInt(20 - acked.size);
    });
  });

  it('never trims a ledger a read-side subscription has not consumed (apache/pulsar#18731)', async () => {
    const { writerTopic } = await harness.createTopic('no-trim');
    const reader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'slow-reader');
    await reader.until(() => reader.events.some((e) => e.event.case === 'subscribed'), 'subscribed');
    await publish(writerTopic, 0, 18);
    // A writer-side subscription consumes everything: trimming runs after its acks.
    const fast = consumer(harness.writerTopics, writerTopic, 'fast');
    fast.flow(100);
    await fast.until(() => fast.entries.length === 18, '18 on the writer');
    fast.ack(fast.entries, 1n);
    await fast.until(() => fast.events.some((e) => e.event.case === 'ackReceipt'), 'receipt');
    const ledgersBefore = (await harness.writerTopics.getTopicStats({ topic: writerTopic })).ledgers;
    reader.flow(100);
    await reader.until(() => reader.entries.length === 18, 'all 18 on the read side');
    expect(reader.texts()).toEqual(Array.from({ length: 18 }, (_, i) => `m${i}`));
    // The control: once the read side has acknowledged too, the writer does trim those ledgers.
    reader.ack(reader.entries, 2n);
    await reader.until(() => reader.events.some((e) => e.event.case === 'ackReceipt'), 'receipt');
    await fast.until(() => fast.entries.length === 18, 'still 18');
    await publish(writerTopic, 18, 1);
    fast.flow(1);
    await fast.until(() => fast.entries.length === 19, 'the next entry');
    fast.ack(fast.entries.slice(18), 3n);
    await eventually(
      async () => (await harness.writerTopics.getTopicStats({ topic: writerTopic })).ledgers < ledgersBefore,
    );
  });

  it('answers FindPosition by event time as the writer does: the first record stamped at or after the time', async () => {
    const { writerTopic } = await harness.createTopic('created-time');
    const stamped = (times: number[]) => ({
      message: {
        topic: writerTopic,
        messages: times.map((time) => ({ payload: text(`t${time}`), eventTimeMs: BigInt(time) })),
        maxEventTimeMs: BigInt(Math.max(...times)),
      },
    });
    await harness.writerTopics.publishOne(stamped([1_000, 2_000]));
    await harness.writerTopics.publishOne(stamped([3_000]));
    const target = { case: 'timestampMs' as const, value: 1_500n };
    const byEventTime = await harness.readOnlyTopics[0]!.findPosition({
      topic: writerTopic,
      target,
      byEventTime: true,
    });
    expect(byEventTime.offset).toBe(1n);
    // By broker time (both entries stored now, long after 1,500 ms) the first entry answers.
    expect((await harness.readOnlyTopics[0]!.findPosition({ topic: writerTopic, target })).offset).toBe(0n);
  });

  it('refuses a fetch by offset below what retention kept at once, naming the earliest retained offset', async () => {
    const { writerTopic } = await harness.createTopic('trimmed-fetch');
    // No subscription holds the ledgers back: trimming after the deduplication snapshots keeps only the open one.
    await publish(writerTopic, 0, 11);
    const earliest = async () =>
      (await harness.writerTopics.findPosition({ topic: writerTopic, target: { case: 'offset', value: 0n } })).offset;
    await eventually(async () => (await earliest()) > 0n, { description: 'the first ledgers to be trimmed' });
    const refused = await harness.readOnlyTopics[0]!.fetchByOffset({
      topic: writerTopic,
      offset: 0n,
      maxEntries: 10,
      maxWaitMs: 20_000n,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: OwnerReason.OFFSET_TRIMMED,
      details: { offset: '0', earliest_offset: String(await earliest()) },
    });
  });

  it('several reader namespaces mirror one writer topic; one whose owner gets no notification still delivers everything', async () => {
    const index = await harness.addReadOnlyOwner({ bus: false, settings: { ownerGroup: QUIET_GROUP } });
    const { writerTopic } = await harness.createTopic('no-bus');
    await subscribeEarly(writerTopic, 'fallback', 'notified');
    const answer = await harness.lookup.lookupTopic({ topic: writerTopic, group: QUIET_GROUP });
    expect(answer.redirectTopic).toBe('persistent://t/quiet/no-bus');
    expect(answer.instanceId).toBe(harness.readOnly[index]!.owner.identity.instanceId);
    const quiet = consumer(harness.readOnlyTopics[index]!, writerTopic, 'fallback');
    const loud = consumer(harness.readOnlyTopics[0]!, writerTopic, 'notified');
    quiet.flow(1_000);
    loud.flow(1_000);
    await publish(writerTopic, 0, 12);
    await quiet.until(() => quiet.entries.length === 12, '12 entries without notifications');
    await loud.until(() => loud.entries.length === 12, '12 entries with notifications');
    expect(quiet.texts()).toEqual(loud.texts());
    const view = harness.readOnly[index]!.owner.registry.find(writerTopic)!.view;
    expect(view.stats.lacNotifications).toBe(0);
    expect(view.stats.lacFallbackReads).toBeGreaterThan(0);
  });
});
