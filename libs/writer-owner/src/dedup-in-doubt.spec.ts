import { LedgerlineError } from '@ledgerline/errors';
import { RedisLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import {
  FaultInjectingLedgerStore,
  InMemoryLedgerStore,
  readWholeLog,
  testBackends,
  type TestBackends,
} from '@ledgerline/managed-ledger/testing';
import { decodeMessageEntry } from '@ledgerline/message-format';
import { refusal, startRedis, type ServerProcess } from '@ledgerline/testing';
import { WriterReason } from './reasons.js';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { SHORT_WRITE_RETRIES, TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

/*
 * A write that reaches the ledger store just as the store goes away: the
 * entry is stored, its reply is lost, and the managed ledger cannot read the
 * ledger back before it gives up. The producer resends with the same sequence
 * ids once the store is back; deduplication must know the entry landed, so
 * the log holds it once, at the offset the resend's receipt names.
 */

const TOPIC = 'persistent://t/ns/dedup-in-doubt';
/** More failures than the retries of one give-up and one resend take. */
const OUTAGE_FAULTS = 20;

async function openTopic(backends: TestBackends): Promise<OwnedTopic> {
  return openTestTopic(TOPIC, backends, TEST_DEDUP_SETTINGS, SHORT_WRITE_RETRIES);
}

/** `stream` stands for the publish stream the entry comes on (the order of its producers after a refusal). */
function publish(topic: OwnedTopic, sequenceId: bigint, stream?: ProducerFence, contiguousSequence = false) {
  return topic.publish(
    {
      topic: TOPIC,
      producerName: 'p',
      sequenceId,
      contiguousSequence,
      payload: new TextEncoder().encode(`m${sequenceId}`),
    } as never,
    undefined,
    stream,
  );
}

function failureOf(publishing: Promise<unknown>): Promise<string> {
  return publishing.then(
    () => 'stored',
    (thrown: unknown) => {
      const error = LedgerlineError.from(thrown);
      return `${error.code} ${error.reason}`;
    },
  );
}

/** Each entry of the log as [offset, sequence id]. */
async function logOf(topic: OwnedTopic): Promise<[number, bigint][]> {
  return (await readWholeLog(topic.ledger)).map((entry) => [
    entry.firstOffset,
    decodeMessageEntry(entry.payload).header.sequenceId,
  ]);
}

describe('deduplication of an append whose write outcome was in doubt', () => {
  let store: FaultInjectingLedgerStore;
  let backends: TestBackends;
  let topic: OwnedTopic;
  beforeEach(async () => {
    store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
    backends = testBackends({ ledgerStore: store });
    topic = await openTopic(backends);
    expect((await publish(topic, 0n)).firstOffset).toBe(0);
  });
  afterEach(async () => topic.unload('test finished'));

  const storeAway = (): void => {
    for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
  };

  it('takes the resend for a duplicate when the write had landed before the store went away', async () => {
    store.faults.push({ call: 'append', mode: 'after' });
    storeAway();
    // Not a reason that says the entry is not in the log: it is.
    expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`);
    // While the ledger cannot be checked, the resend is refused, not stored.
    expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.LEDGER_WRITE_FAILED}`);
    store.faults.splice(0);
    const resend = await publish(topic, 1n);
    expect([resend.duplicate, resend.firstOffset]).toEqual([true, 1]);
    expect((await publish(topic, 2n)).firstOffset).toBe(2);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
      [2, 2n],
    ]);
  });

  it('takes the resend for a duplicate after the topic was reloaded before its ledger was checked', async () => {
    store.faults.push({ call: 'append', mode: 'after' });
    storeAway();
    expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`);
    store.faults.splice(0);
    // The reload's recovery of the last ledger finds the entry, and the replay after the snapshot reads it.
    await topic.unload('reload');
    topic = await openTopic(backends);
    const resend = await publish(topic, 1n);
    expect([resend.duplicate, resend.firstOffset]).toEqual([true, 1]);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
    ]);
  });

  it('stores the resend once when the write had not landed', async () => {
    store.faults.push({ call: 'append', mode: 'before' });
    storeAway();
    expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`);
    store.faults.splice(0);
    const resend = await publish(topic, 1n);
    expect([resend.duplicate, resend.firstOffset]).toEqual([false, 1]);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
    ]);
  });
});

describe('one producer resending on two streams at once', () => {
  let store: FaultInjectingLedgerStore;
  let topic: OwnedTopic;
  beforeEach(async () => {
    store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
    topic = await openTopic(testBackends({ ledgerStore: store }));
    expect((await publish(topic, 0n)).firstOffset).toBe(0);
  });
  afterEach(async () => topic.unload('test finished'));

  // A producer that reconnected while its old stream still delivers (a stall at start, a half-open
  // connection) sends the same ids on both. Both resends wait for the in-doubt append to be checked and
  // then ask the deduplication together: it must hand the ids to one of them only.
  it('stores entries waiting on an in-doubt append once, however many streams resend them', async () => {
    store.faults.push({ call: 'append', mode: 'before' });
    for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
    expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`);
    store.faults.splice(0);
    const streams = [0, 1, 2].map(() => new ProducerFence());
    const receipts = await Promise.all(streams.map((stream) => publish(topic, 1n, stream)));
    expect(receipts.filter((receipt) => !receipt.duplicate)).toHaveLength(1);
    expect(receipts.map((receipt) => receipt.firstOffset)).toEqual([1, 1, 1]);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
    ]);
  });

  it('stores entries waiting on the same entry in flight once, however many streams resend them', async () => {
    const streams = [0, 1, 2].map(() => new ProducerFence());
    const receipts = await Promise.all(
      [1n, 2n].flatMap((sequenceId) => streams.map((stream) => publish(topic, sequenceId, stream))),
    );
    expect(receipts.filter((receipt) => !receipt.duplicate)).toHaveLength(2);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
      [2, 2n],
    ]);
  });
});

describe('the order of a producer whose append failed while the store was away', () => {
  let store: FaultInjectingLedgerStore;
  let topic: OwnedTopic;
  const stream = new ProducerFence();
  beforeEach(async () => {
    store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
    topic = await openTopic(testBackends({ ledgerStore: store }));
    expect((await publish(topic, 0n, stream)).firstOffset).toBe(0);
    store.faults.push({ call: 'append', mode: 'before' });
    for (let i = 0; i < OUTAGE_FAULTS; i++) store.faults.push({ call: 'fence', mode: 'before' });
    expect(await failureOf(publish(topic, 1n, stream))).toBe(
      `UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`,
    );
    store.faults.splice(0);
  });
  afterEach(async () => topic.unload('test finished'));

  it('refuses a later sequence id on the same stream until the failed one is resent, which is then stored, not taken for a duplicate', async () => {
    // Pipelined behind the failed entry, it arrives once the store is back. Stored, it would make the resend of 1 a "duplicate".
    expect(await failureOf(publish(topic, 2n, stream))).toBe(`UNAVAILABLE ${WriterReason.SEQUENCE_GAP}`);
    expect(await failureOf(publish(topic, 3n, stream))).toBe(`UNAVAILABLE ${WriterReason.SEQUENCE_GAP}`);
    const resend = await publish(topic, 1n, stream);
    expect([resend.duplicate, resend.firstOffset]).toEqual([false, 1]);
    expect((await publish(topic, 2n, stream)).firstOffset).toBe(2);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
      [2, 2n],
    ]);
  });

  it('names the sequence id to resend from in the refusal', async () => {
    const refused = await refusal(publish(topic, 5n, stream));
    expect(refused.details).toMatchObject({ producerName: 'p', sequenceId: '5', resendFromSequenceId: '1' });
  });

  it('refuses a later sequence id of a gapless producer on any stream, until the failed one is resent', async () => {
    // A Kafka idempotent producer through the gateway: one shared stream, replaced when it breaks, carries it.
    const replaced = new ProducerFence();
    expect(await failureOf(publish(topic, 2n, replaced, true))).toBe(`UNAVAILABLE ${WriterReason.SEQUENCE_GAP}`);
    expect((await publish(topic, 1n, replaced, true)).firstOffset).toBe(1);
    expect((await publish(topic, 2n, replaced, true)).firstOffset).toBe(2);
    // Gapless, a skip is a gap even with no failure before it.
    expect(await failureOf(publish(topic, 4n, replaced, true))).toBe(`UNAVAILABLE ${WriterReason.SEQUENCE_GAP}`);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 1n],
      [2, 2n],
    ]);
  });

  it('takes a later sequence id on a new stream: the producer reconnected without the entry it gave up on', async () => {
    const reconnected = new ProducerFence();
    expect((await publish(topic, 2n, reconnected)).firstOffset).toBe(1);
    expect(await logOf(topic)).toEqual([
      [0, 0n],
      [1, 2n],
    ]);
  });
});

describe('deduplication across a redis-server killed right after an append reached it', () => {
  let redis: ServerProcess;
  let redisStore: LedgerStore;
  beforeAll(async () => {
    // As R5 runs it: every write fsynced to the append-only file before it is answered, so a kill loses none.
    redis = await startRedis({ extraArgs: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    redisStore = new RedisLedgerStore({ url: redis.url, connectTimeoutMs: 200, commandTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    await redisStore?.close();
    await redis?.stop();
  });

  it('takes the producer resend after the restart for a duplicate', async () => {
    const store = new FaultInjectingLedgerStore(redisStore);
    const topic = await openTopic(testBackends({ ledgerStore: store }));
    try {
      expect((await publish(topic, 0n)).firstOffset).toBe(0);
      // The append is in Redis; the server dies before its reply is read. The managed ledger's checks of the
      // ledger then meet a dead server until it gives up.
      store.faults.push({ call: 'append', mode: 'after', tookEffect: () => redis.kill() });
      expect(await failureOf(publish(topic, 1n))).toBe(`UNAVAILABLE ${ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN}`);
      await redis.restart();
      const resend = await publish(topic, 1n);
      expect([resend.duplicate, resend.firstOffset]).toEqual([true, 1]);
      expect((await publish(topic, 2n)).firstOffset).toBe(2);
      expect(await logOf(topic)).toEqual([
        [0, 0n],
        [1, 1n],
        [2, 2n],
      ]);
    } finally {
      await topic.unload('test finished');
    }
  });
});
