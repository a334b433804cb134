import { InitialPosition, SubscriptionType, type TopicsService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';
import { eventually, refusal } from '@ledgerline/testing';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { QUIET_GROUP, startReadOnlyHarness, type ReadOnlyHarness } from './testing/index.js';

// PIP-63's read-only owners with PIP-381's large cursors: a writer's cursor
// with more acknowledged ranges than one answer holds. The writer's message
// bound is 2 KiB here, so a few hundred ranges outgrow GetCursor, as about
// 300,000 do at the default 4 MiB.

const text = (value: string) => new TextEncoder().encode(value);
const ENTRIES = 800;
/**
 * The test that publishes ENTRIES one round trip at a time, in order (its payloads name their places): quick on a
 * quiet machine, it ran past the default 30 s at load average 20.
 */
const LARGE_TOPIC_TIMEOUT_MS = 120_000;

describe('read-only owners and a writer cursor larger than one answer', () => {
  let harness: ReadOnlyHarness;
  const consumers: TestConsumer[] = [];
  beforeAll(async () => {
    harness = await startReadOnlyHarness({ writerMaxMessageSizeBytes: 2 * 1024 });
    await harness.addReadOnlyOwner();
    // The quiet group's owner merges at most 2 ranges whole: larger cursors by mark-delete only.
    await harness.addReadOnlyOwner({ settings: { ownerGroup: QUIET_GROUP, cursorMergeMaxRanges: 2 } });
  }, 60_000);
  afterAll(async () => {
    for (const consumer of consumers) consumer.close();
    await harness.close();
  });

  function consumer(client: Client<typeof TopicsService>, topic: string, subscription: string): TestConsumer {
    const made = new TestConsumer(client, {
      case: 'subscribe',
      value: {
        topic,
        subscription,
        type: SubscriptionType.SHARED,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    consumers.push(made);
    return made;
  }

  /** `count` entries m0.., a cursor made before them, and every odd entry acknowledged on the writer. */
  async function topicWithOddAcks(local: string, count: number, subscription: string): Promise<string> {
    const { writerTopic } = await harness.createTopic(local);
    await harness.writerCursors.createCursor({
      topic: writerTopic,
      subscription,
      start: { case: 'initialPosition', value: InitialPosition.EARLIEST },
    });
    const positions = [];
    for (let i = 0; i < count; i++) {
      const { receipt } = await harness.writerTopics.publishOne({
        message: { topic: writerTopic, payload: text(`m${i}`) },
      });
      positions.push(receipt!.position!);
    }
    const ackedRanges = positions
      .filter((_, index) => index % 2 === 1)
      .map((p) => ({ ledgerId: p.ledgerId, firstEntryId: p.entryId, lastEntryId: p.entryId }));
    for (let start = 0; start < ackedRanges.length; start += 100) {
      await harness.writerCursors.updateCursor({
        topic: writerTopic,
        subscription,
        update: { case: 'delta', value: { ackedRanges: ackedRanges.slice(start, start + 100) } },
        withoutRanges: true,
      });
    }
    return writerTopic;
  }

  it(
    'serves a subscription whose cursor no GetCursor answer holds, and its acks land on the writer',
    async () => {
      const writerTopic = await topicWithOddAcks('large', ENTRIES, 'big');
      // The precondition: the whole cursor is more than the writer may send in one answer.
      const whole = await refusal(harness.writerCursors.getCursor({ topic: writerTopic, subscription: 'big' }));
      expect(whole.code).toBe('RESOURCE_EXHAUSTED');

      const reader = consumer(harness.readOnlyTopics[0]!, writerTopic, 'big');
      reader.flow(ENTRIES);
      // Every unacknowledged (even) entry arrives; acknowledged ones may come again (at least once), never fewer.
      const evens = Array.from({ length: ENTRIES / 2 }, (_, i) => `m${2 * i}`);
      await reader.until(() => {
        const got = new Set(reader.texts());
        return evens.every((text) => got.has(text));
      }, 'every even entry');
      reader.ack(reader.entries, 1n);
      await reader.until(() => reader.events.some((e) => e.event.case === 'ackReceipt'), 'ack receipt');
      // Every entry acknowledged somewhere: the writer's cursor has nothing left above mark-delete.
      await eventually(async () => {
        const summary = await harness.writerCursors.getCursorSummary({ topic: writerTopic, subscription: 'big' });
        return summary.ackMap?.spanEntries === 0n;
      });
    },
    LARGE_TOPIC_TIMEOUT_MS,
  );

  it('merges a small cursor whole, and one above cursorMergeMaxRanges by its mark-delete position only', async () => {
    const writerTopic = await topicWithOddAcks('small', 10, 'few');
    // Owner 0 merges the 5 ranges whole: only the 5 unacknowledged entries come.
    const whole = consumer(harness.readOnlyTopics[0]!, writerTopic, 'few');
    whole.flow(100);
    await whole.until(() => whole.entries.length === 5, 'the 5 unacknowledged entries');
    expect(whole.texts()).toEqual(['m0', 'm2', 'm4', 'm6', 'm8']);
    whole.close();
    // Owner 1 takes at most 2 ranges whole: it knows only mark-delete, so the acknowledged entries come too.
    const summary = consumer(harness.readOnlyTopics[1]!, writerTopic, 'few');
    summary.flow(100);
    await summary.until(() => summary.entries.length === 10, 'all 10 entries');
    expect(summary.texts()).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
  });
});
