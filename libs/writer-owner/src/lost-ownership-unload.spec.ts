import { LedgerlineError } from '@ledgerline/errors';
import { FaultInjectingLedgerStore, InMemoryLedgerStore, testBackends } from '@ledgerline/managed-ledger/testing';
import { OwnerReason } from '@ledgerline/ownership';
import type { OwnedTopic } from './owned-topic.js';
import { TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

/*
 * An owner that lost its session (cut off from the metadata service and the
 * ledger store while its producers still reach it) unloads its topics. An
 * append it handed to the store before the cut may stay unanswered for as
 * long as the store's retries last (50 s seen on pods), and a producer that
 * waits for its receipt stays on this owner all that time although another
 * owner already took the topic. So a topic unloaded for lost ownership
 * answers every receipt still owed at once with the unload (the producer
 * resends after a lookup; the new owner's fence keeps the late append out,
 * and deduplication answers a resend of one that did land with its place).
 * A graceful unload still lets appends in flight finish.
 */

const TOPIC = 'persistent://t/ns/lost-ownership';
/** Longer than an answer owed at once takes, far shorter than the spec's timeout. */
const ANSWER_BOUND_MS = 5_000;

function publish(topic: OwnedTopic, sequenceId: bigint): Promise<unknown> {
  return topic.publish({
    topic: TOPIC,
    producerName: 'p',
    sequenceId,
    payload: new TextEncoder().encode(`m${sequenceId}`),
  } as never);
}

/** What a publish came to within the bound: 'stored', its failure, or 'still waiting'. */
async function outcomeWithin(publishing: Promise<unknown>, boundMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const waiting = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting'), boundMs)));
  try {
    return await Promise.race([
      publishing.then(
        () => 'stored',
        (thrown: unknown) => {
          const error = LedgerlineError.from(thrown);
          return `${error.code} ${error.reason}`;
        },
      ),
      waiting,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A topic whose next append is held by the store until `open()` is called. */
async function topicWithHeldAppend() {
  const store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
  const topic = await openTestTopic(TOPIC, testBackends({ ledgerStore: store }), TEST_DEDUP_SETTINGS);
  expect(await outcomeWithin(publish(topic, 0n), ANSWER_BOUND_MS)).toBe('stored');
  let open = (): void => undefined;
  let reached = (): void => undefined;
  const held = new Promise<void>((resolve) => (reached = resolve));
  store.faults.push({ call: 'append', mode: 'pass', until: new Promise<void>((resolve) => (open = resolve)), reached });
  return { topic, held, open };
}

describe('unloading a topic whose ownership is lost', () => {
  it('answers the receipts still owed at once with TOPIC_UNLOADED, while the store still holds the append', async () => {
    const { topic, held, open } = await topicWithHeldAppend();
    const owed = publish(topic, 1n);
    await held;
    const unloading = topic.unload('owner session lost', true);
    expect(await outcomeWithin(owed, ANSWER_BOUND_MS)).toBe(`UNAVAILABLE ${OwnerReason.TOPIC_UNLOADED}`);
    open();
    await unloading;
  });

  it('lets appends in flight finish on a graceful unload', async () => {
    const { topic, held, open } = await topicWithHeldAppend();
    const owed = publish(topic, 1n);
    await held;
    const unloading = topic.unload('unloaded on request');
    expect(await outcomeWithin(owed, 200)).toBe('still waiting');
    open();
    expect(await outcomeWithin(owed, ANSWER_BOUND_MS)).toBe('stored');
    await unloading;
  });
});
