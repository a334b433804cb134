import { LedgerlineError } from '@ledgerline/errors';
import {
  FaultInjectingLedgerStore,
  InMemoryLedgerStore,
  readWholeLog,
  testBackends,
} from '@ledgerline/managed-ledger/testing';
import { decodeMessageEntry } from '@ledgerline/message-format';
import type { Receipt } from './receipts.js';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { TopicBatch } from './topic-batch.js';
import { SHORT_WRITE_RETRIES, TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

/*
 * The faults a batch of entries published together can meet on its way to
 * the ledger store, which writes it in several store writes (two entries
 * each here): a write that fails part way through the batch, another owner
 * fencing the ledger between two of its writes, and a producer's resend
 * whose ids span entries stored by two different writes. Whatever the fault,
 * an entry is acknowledged only once stored, with the offset it is stored
 * at, and offsets stay continuous once the producer sends the rest again.
 */

const TOPIC = 'persistent://t/ns/publish-batch-faults';
/** More failures than the retries of one give-up take. */
const OUTAGE_FAULTS = 20;
const WRITE_OF_TWO = { ...SHORT_WRITE_RETRIES, maxWriteBatchEntries: 2 };

function entry(sequenceId: number) {
  return {
    topic: TOPIC,
    producerName: 'p',
    sequenceId: BigInt(sequenceId),
    payload: new TextEncoder().encode(`m${sequenceId}`),
  } as never;
}

/** Publishes the ids together, as the entries of one request are handed over, and says how each ended. */
async function publishTogether(topic: OwnedTopic, ids: number[]): Promise<string[]> {
  const batch = new TopicBatch(ids.map(entry), new ProducerFence(), undefined);
  topic.enqueue(batch);
  await batch.answered;
  return ids.map((_, index) => {
    const receipt = batch.receipts[index];
    return receipt === undefined ? `failed ${LedgerlineError.from(batch.failures[index]).code}` : describe(receipt);
  });
}

function describe(receipt: Receipt): string {
  return `${receipt.duplicate ? 'duplicate' : 'stored'} at ${receipt.firstOffset}`;
}

/** Each entry of the log as [offset, sequence id]. */
async function logOf(topic: OwnedTopic): Promise<[number, bigint][]> {
  return (await readWholeLog(topic.ledger)).map((stored) => [
    stored.firstOffset,
    decodeMessageEntry(stored.payload).header.sequenceId,
  ]);
}

const offsetsUpTo = (last: number): [number, bigint][] =>
  Array.from({ length: last + 1 }, (_, i): [number, bigint] => [i, BigInt(i)]);

let inner: InMemoryLedgerStore;
let store: FaultInjectingLedgerStore;
let topic: OwnedTopic;
beforeEach(async () => {
  inner = new InMemoryLedgerStore();
  store = new FaultInjectingLedgerStore(inner);
  topic = await openTestTopic(TOPIC, testBackends({ ledgerStore: store }), TEST_DEDUP_SETTINGS, WRITE_OF_TWO);
  expect(describe(await topic.publish(entry(0)))).toBe('stored at 0');
});
afterEach(async () => topic.unload('test finished'));

it('acknowledges the entries of a batch stored before its write failed, fails the rest, and the resend continues the offsets', async () => {
  // The batch 1..6 goes in writes [1, 2], [3, 4], [5, 6]: the second fails before it reaches the store, which
  // then stays away for longer than the managed ledger retries.
  store.faults.push({ call: 'append', mode: 'pass' }, { call: 'append', mode: 'before' });
  for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
  const outcomes = await publishTogether(topic, [1, 2, 3, 4, 5, 6]);
  expect(outcomes.slice(0, 2)).toEqual(['stored at 1', 'stored at 2']);
  expect(outcomes.slice(2)).toEqual(Array(4).fill('failed UNAVAILABLE'));

  store.faults.splice(0);
  expect(await publishTogether(topic, [3, 4, 5, 6])).toEqual([3, 4, 5, 6].map((offset) => `stored at ${offset}`));
  expect(await logOf(topic)).toEqual(offsetsUpTo(6));
});

it('acknowledges the writes of a batch made before another owner fenced the ledger, and nothing after', async () => {
  let reached!: () => void;
  const fenceNow = new Promise<void>((resolve) => (reached = resolve));
  let fenced!: () => void;
  const fenceDone = new Promise<void>((resolve) => (fenced = resolve));
  // The second write of the batch waits while another owner fences the ledger, then goes on to the store.
  store.faults.push({ call: 'append', mode: 'pass' }, { call: 'append', mode: 'pass', until: fenceDone, reached });
  const publishing = publishTogether(topic, [1, 2, 3, 4, 5, 6]);
  await fenceNow;
  const ledgerId = topic.ledger.lastConfirmedPosition()!.ledgerId;
  await inner.fence(ledgerId);
  fenced();

  const outcomes = await publishing;
  expect(outcomes.slice(0, 2)).toEqual(['stored at 1', 'stored at 2']);
  expect(outcomes.slice(2).every((outcome) => outcome.startsWith('failed'))).toBe(true);
  // What the next owner finds: the entry before the batch and the two acknowledged (one entry each), nothing after.
  expect(await inner.lastAddConfirmed(ledgerId)).toBe(2);
});

it('answers a resend spanning entries of two store writes as duplicates, and stores only what is new', async () => {
  expect(await publishTogether(topic, [1, 2, 3, 4])).toEqual([1, 2, 3, 4].map((offset) => `stored at ${offset}`));
  // 2 was stored by the write [1, 2], 3 and 4 by [3, 4]; 5 and 6 are new. As in Pulsar, deduplication keeps
  // the place of each producer's last entry only: an older duplicate is answered without one (-1).
  expect(await publishTogether(topic, [2, 3, 4, 5, 6])).toEqual([
    'duplicate at -1',
    'duplicate at -1',
    'duplicate at 4',
    'stored at 5',
    'stored at 6',
  ]);
  expect(await logOf(topic)).toEqual(offsetsUpTo(6));
});
