import { LedgerlineError } from '@ledgerline/errors';
import {
  FaultInjectingLedgerStore,
  InMemoryLedgerStore,
  readWholeLog,
  testBackends,
} from '@ledgerline/managed-ledger/testing';
import { decodeMessageEntry } from '@ledgerline/message-format';
import { eventually } from '@ledgerline/testing';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { WriterReason } from './reasons.js';
import { SHORT_WRITE_RETRIES, TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';
import { TopicBatch } from './topic-batch.js';

/*
 * The order a topic keeps, fixed once when a request's entries enter its
 * queue: deduplication decides over a batch in one pass (a resend may span
 * what is stored, what is in flight and what is new), a duplicate of an
 * entry in flight is answered by that entry once its write settles, and an
 * entry refused, or waiting for its budget, is never overtaken by a later one
 * of its producer on the same stream.
 */

const TOPIC = 'persistent://t/ns/publish-order';
/** The topic's byte bound: three entries of 1 KiB (framed a little larger) fit, a fourth does not. */
const LIMIT_BYTES = 4 * 1024;
/** More failures than the retries of one give-up take. */
const OUTAGE_FAULTS = 20;

function entry(sequenceId: number, payloadBytes = 8) {
  return {
    topic: TOPIC,
    producerName: 'p',
    sequenceId: BigInt(sequenceId),
    payload: new Uint8Array(payloadBytes).fill(sequenceId),
  } as never;
}

/** Hands the ids to the topic together, as one request's entries on the stream `fence` stands for. */
function enqueue(topic: OwnedTopic, ids: number[], fence = new ProducerFence(), payloadBytes?: number): TopicBatch {
  const batch = new TopicBatch(
    ids.map((id) => entry(id, payloadBytes)),
    fence,
    undefined,
  );
  topic.enqueue(batch);
  return batch;
}

/** How each entry of `batch` ended: stored or a duplicate at an offset, or the reason it was refused. */
function outcomes(batch: TopicBatch): string[] {
  return batch.messages.map((_, index) => {
    const receipt = batch.receipts[index];
    if (receipt === undefined) return LedgerlineError.from(batch.failures[index]).reason;
    return `${receipt.duplicate ? 'duplicate' : 'stored'} at ${receipt.firstOffset}`;
  });
}

/** The sequence ids in the log, in log order. */
async function logOf(topic: OwnedTopic): Promise<number[]> {
  return (await readWholeLog(topic.ledger)).map((stored) =>
    Number(decodeMessageEntry(stored.payload).header.sequenceId),
  );
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let reached = false;
  return { opened, open, reached: () => reached, reach: () => (reached = true) };
}

/** Lets queued callbacks and promise jobs run, so what would go on does before the test looks. */
async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

let store: FaultInjectingLedgerStore;
let topic: OwnedTopic;
beforeEach(async () => {
  store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
  topic = await openTestTopic(
    TOPIC,
    testBackends({ ledgerStore: store }),
    TEST_DEDUP_SETTINGS,
    SHORT_WRITE_RETRIES,
    LIMIT_BYTES,
  );
});
afterEach(async () => topic.unload('test finished'));

it('answers a resend spanning a stored batch, one in flight and new entries, storing only the new ones', async () => {
  const stored = enqueue(topic, [0, 1, 2, 3]);
  await stored.answered;
  const held = gate();
  store.faults.push({ call: 'append', mode: 'pass', until: held.opened, reached: held.reach });
  const inFlight = enqueue(topic, [4, 5, 6, 7]);
  await eventually(held.reached, { description: 'the write of 4 to 7 to reach the store' });
  // A reconnected producer resends from 2 on another stream: 2 and 3 are stored, 4 to 7 in flight, 8 and 9 new.
  const resend = enqueue(topic, [2, 3, 4, 5, 6, 7, 8, 9]);
  await settle();
  expect(resend.isAnswered(2)).toBe(false);
  held.open();
  await Promise.all([inFlight.answered, resend.answered]);
  expect(outcomes(inFlight)).toEqual([4, 5, 6, 7].map((offset) => `stored at ${offset}`));
  // As in Pulsar, the place of a stored duplicate is known for the producer's last entry only (3 here).
  expect(outcomes(resend)).toEqual([
    'duplicate at -1',
    'duplicate at 3',
    ...[4, 5, 6, 7].map((offset) => `duplicate at ${offset}`),
    'stored at 8',
    'stored at 9',
  ]);
  expect(resend.receipts[3]!.position).toEqual(inFlight.receipts[1]!.position);
  expect(await logOf(topic)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

it('answers a resend of an entry in flight with that entry’s receipt, once, after the store holds it', async () => {
  const held = gate();
  store.faults.push({ call: 'append', mode: 'pass', until: held.opened, reached: held.reach });
  const original = enqueue(topic, [0]);
  await eventually(held.reached, { description: 'the write of 0 to reach the store' });
  const resends = [enqueue(topic, [0]), enqueue(topic, [0], new ProducerFence())];
  await settle();
  // Nothing is answered before the store holds the entry, and nothing asked the store to store it again.
  expect(resends.map((resend) => resend.isAnswered(0))).toEqual([false, false]);
  expect(topic.pendingEntries).toBe(1);
  held.open();
  await Promise.all([original.answered, ...resends.map((resend) => resend.answered)]);
  expect(outcomes(original)).toEqual(['stored at 0']);
  for (const resend of resends) {
    expect(resend.receipts[0]).toEqual({ ...original.receipts[0], duplicate: true });
  }
  expect(topic.dedupHits).toBe(2);
  expect(await logOf(topic)).toEqual([0]);
});

it('refuses a resend of an entry in flight whose write failed, and stores the next resend once', async () => {
  const held = gate();
  // The write fails and the store stays away for longer than the managed ledger retries: the append is in doubt.
  store.faults.push({ call: 'append', mode: 'before', until: held.opened, reached: held.reach });
  for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
  const original = enqueue(topic, [0]);
  await eventually(held.reached, { description: 'the write of 0 to reach the store' });
  const resend = enqueue(topic, [0]);
  await settle();
  held.open();
  await Promise.all([original.answered, resend.answered]);
  // The resend is not told it is stored: its original was not.
  expect(resend.receipts[0]).toBeUndefined();
  expect(LedgerlineError.from(resend.failures[0]).code).toBe('UNAVAILABLE');
  store.faults.splice(0);
  const again = enqueue(topic, [0]);
  await again.answered;
  expect(outcomes(again)).toEqual(['stored at 0']);
  expect(await logOf(topic)).toEqual([0]);
});

it('refuses the entries queued behind a failed append of their producer on the same stream, until it is resent', async () => {
  // 1 KiB entries: three fit in the topic's bound and go to the store in one write, which fails while the
  // store stays away; 3 to 5 wait in the queue for room, which the failure makes.
  store.faults.push({ call: 'append', mode: 'before' });
  for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
  const fence = new ProducerFence();
  const batch = enqueue(topic, [0, 1, 2, 3, 4, 5], fence, 1024);
  // The store is back the moment the failure is answered: 3 to 5 would find nothing in their way there.
  batch.whenAnswered(0, () => store.faults.splice(0));
  await batch.answered;
  expect(outcomes(batch).slice(3)).toEqual(Array(3).fill(WriterReason.SEQUENCE_GAP));
  expect(await logOf(topic)).toEqual([]);
  const resend = enqueue(topic, [0, 1, 2, 3, 4, 5], fence, 1024);
  await resend.answered;
  expect(outcomes(resend)).toEqual([0, 1, 2, 3, 4, 5].map((offset) => `stored at ${offset}`));
  expect(await logOf(topic)).toEqual([0, 1, 2, 3, 4, 5]);
});

it('lets no later request of a stream overtake one waiting for the topic’s byte bound', async () => {
  const held = gate();
  store.faults.push({ call: 'append', mode: 'pass', until: held.opened, reached: held.reach });
  const fence = new ProducerFence();
  const first = enqueue(topic, [0, 1, 2], fence, 1024);
  await eventually(held.reached, { description: 'the write of 0 to 2 to reach the store' });
  // 3 needs more room than is left; 4 is small enough to fit beside 0 to 2, and must wait behind 3 all the same.
  const large = enqueue(topic, [3], fence, 2048);
  const small = enqueue(topic, [4], fence, 8);
  await settle();
  expect(topic.pendingEntries).toBe(3);
  held.open();
  await Promise.all([first.answered, large.answered, small.answered]);
  expect([...outcomes(large), ...outcomes(small)]).toEqual(['stored at 3', 'stored at 4']);
  expect(await logOf(topic)).toEqual([0, 1, 2, 3, 4]);
});
