import {
  FaultInjectingLedgerStore,
  InMemoryLedgerStore,
  testBackends,
  type TestBackends,
} from '@ledgerline/managed-ledger/testing';
import { create, fromBinary } from '@bufbuild/protobuf';
import {
  PublishRequestSchema,
  PublishResponseSchema,
  type PublishRequest,
  type PublishResponse,
} from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { eventually } from '@ledgerline/testing';
import { Registry } from 'prom-client';
import { ConnectionBudgets } from './connection-budgets.js';
import { writerMetrics } from './metrics.js';
import { OwnedTopic } from './owned-topic.js';
import type { Receipt } from './receipts.js';
import { ProducerFence } from './producer-fence.js';
import { publishStream } from './publish-stream.js';
import { TopicBatch } from './topic-batch.js';
import { openTestTopic } from './testing/test-topic.js';

const TOPIC = 'persistent://t/ns/backpressure';
const MESSAGE_BYTES = 1024;

/** Lets every queued callback and promise job run, so a stream that would read on does so before we look. */
async function settle(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** A loaded topic whose entries are answered when the test says: each entry handed over takes `next()`'s answer. */
function fakeTopic(next: () => Promise<Receipt>): OwnedTopic {
  return {
    unloaded: false,
    checkLoaded: () => undefined,
    enqueue: (batch: TopicBatch) => {
      for (let index = 0; index < batch.size; index++) {
        next().then(
          (answer) => batch.answer(index, answer),
          (thrown: unknown) => batch.refuse(index, thrown),
        );
      }
    },
  } as unknown as OwnedTopic;
}

function receipt(index: number): Receipt {
  return {
    sequenceId: BigInt(index),
    position: { ledgerId: 1, entryId: index },
    firstOffset: index,
    lastOffset: index,
    duplicate: false,
    publishTimeMs: 0,
  };
}

describe('publish backpressure: the per-stream bound', () => {
  it('stops reading the stream at maxPendingBytes of unanswered publishes, and reads on as they are answered', async () => {
    const LIMIT_BYTES = 8 * MESSAGE_BYTES;
    const TOTAL = 40;
    // The topic answers only when the test says so, as a ledger store that stalls would.
    const receipts = Array.from({ length: TOTAL }, () => deferred<Receipt>());
    let submitted = 0;
    const topic = fakeTopic(() => receipts[submitted++]!.promise);
    let pulled = 0;
    let answered = 0;
    let resolved = 0;
    let mostPendingBytes = 0;
    async function* requests(): AsyncIterable<PublishRequest> {
      for (let i = 0; i < TOTAL; i++) {
        // Read by the server: what it read and the topic has not answered is what it holds.
        pulled++;
        mostPendingBytes = Math.max(mostPendingBytes, (pulled - resolved) * MESSAGE_BYTES);
        yield create(PublishRequestSchema, {
          message: { topic: TOPIC, payload: new Uint8Array(MESSAGE_BYTES), sequenceId: BigInt(i) },
        });
      }
    }
    const controller = new AbortController();
    const responses: PublishResponse[] = [];
    const stream = publishStream(requests(), { signal: controller.signal } as CallContext, {
      getTopic: async () => topic,
      maxPendingBytes: LIMIT_BYTES,
      maxPendingMessages: 1_000,
      maxMessagesPerRequest: 1_000,
      metrics: writerMetrics(new Registry()),
      draining: new AbortController().signal,
    });
    const reading = (async () => {
      for await (const response of stream) {
        responses.push(fromBinary(PublishResponseSchema, response.bytes));
        answered++;
      }
    })();

    await eventually(() => submitted === 8, { description: 'the stream to take in its bound' });
    await settle();
    // Eight publishes fill the bound; the ninth is read and waits for room; nothing more is read.
    expect([submitted, pulled]).toEqual([8, 9]);

    const answer = (i: number): void => {
      resolved++;
      receipts[i]!.resolve(receipt(i));
    };
    for (let i = 0; i < 3; i++) answer(i);
    await eventually(() => submitted === 11, { description: 'three more publishes after three answers' });
    await settle();
    expect([submitted, pulled, answered]).toEqual([11, 12, 3]);

    for (let i = 3; i < TOTAL; i++) answer(i);
    await reading;
    expect(responses.map((r) => (r.result.value as { sequenceId: bigint }).sequenceId)).toEqual(
      Array.from({ length: TOTAL }, (_, i) => BigInt(i)),
    );
    // The one request read while it waited for room is the most the stream ever held beyond the bound.
    expect(mostPendingBytes).toBeLessThanOrEqual(LIMIT_BYTES + MESSAGE_BYTES);
  });

  it("bounds all streams of one connection together, on top of each stream's own bound", async () => {
    const STREAM_LIMIT_BYTES = 8 * MESSAGE_BYTES;
    const CONNECTION_LIMIT_BYTES = 10 * MESSAGE_BYTES;
    const PER_STREAM = 20;
    const receipts = Array.from({ length: 2 * PER_STREAM }, () => deferred<Receipt>());
    let submitted = 0;
    const topic = fakeTopic(() => receipts[submitted++]!.promise);
    const connections = new ConnectionBudgets(CONNECTION_LIMIT_BYTES);
    const pulled = [0, 0];
    const streams = [0, 1].map((index) => {
      async function* requests(): AsyncIterable<PublishRequest> {
        for (let i = 0; i < PER_STREAM; i++) {
          pulled[index]!++;
          yield create(PublishRequestSchema, {
            message: { topic: TOPIC, payload: new Uint8Array(MESSAGE_BYTES), sequenceId: BigInt(i) },
          });
        }
      }
      const lease = connections.take('ipv4:127.0.0.1:50000');
      const stream = publishStream(requests(), { signal: new AbortController().signal } as CallContext, {
        getTopic: async () => topic,
        maxPendingBytes: STREAM_LIMIT_BYTES,
        maxPendingMessages: 1_000,
        maxMessagesPerRequest: 1_000,
        connectionBudget: lease.budget,
        metrics: writerMetrics(new Registry()),
        draining: new AbortController().signal,
      });
      return (async () => {
        let answered = 0;
        for await (const response of stream) {
          expect(fromBinary(PublishResponseSchema, response.bytes).result.case).toBe('receipt');
          answered++;
        }
        lease.release();
        return answered;
      })();
    });
    await eventually(() => submitted === 10, { description: 'the connection to take in its bound' });
    await settle();
    // Each stream alone could hold 8: together they hold the connection's 10, plus one read and waiting each.
    expect(submitted).toBe(10);
    expect(pulled[0]! + pulled[1]!).toBe(12);
    for (let i = 0; i < receipts.length; i++) receipts[i]!.resolve(receipt(i));
    expect(await Promise.all(streams)).toEqual([PER_STREAM, PER_STREAM]);
    expect(connections.connections).toBe(0);
  });

  it('stops at maxPendingMessages too, whatever the sizes', async () => {
    const receipts = Array.from({ length: 10 }, () => deferred<Receipt>());
    let submitted = 0;
    const topic = fakeTopic(() => receipts[submitted++]!.promise);
    let pulled = 0;
    async function* requests(): AsyncIterable<PublishRequest> {
      for (let i = 0; i < 10; i++) {
        pulled++;
        yield create(PublishRequestSchema, {
          message: { topic: TOPIC, payload: new Uint8Array(1), sequenceId: BigInt(i) },
        });
      }
    }
    const stream = publishStream(requests(), { signal: new AbortController().signal } as CallContext, {
      getTopic: async () => topic,
      maxPendingBytes: 1024 * 1024,
      maxPendingMessages: 4,
      maxMessagesPerRequest: 1_000,
      metrics: writerMetrics(new Registry()),
      draining: new AbortController().signal,
    });
    let answered = 0;
    const reading = (async () => {
      for await (const _ of stream) answered++;
    })();
    await eventually(() => submitted === 4, { description: 'four publishes' });
    await settle();
    expect([submitted, pulled]).toEqual([4, 4]);
    receipts[0]!.resolve(receipt(0));
    await eventually(() => submitted === 5, { description: 'one more after one answer' });
    for (let i = 1; i < 10; i++) receipts[i]!.resolve(receipt(i));
    await reading;
    expect(answered).toBe(10);
  });

  it('counts every entry of a coalesced request against maxPendingMessages, and its answer waits for all of them', async () => {
    const receipts = Array.from({ length: 9 }, () => deferred<Receipt>());
    let submitted = 0;
    const topic = fakeTopic(() => receipts[submitted++]!.promise);
    let pulled = 0;
    async function* requests(): AsyncIterable<PublishRequest> {
      for (let i = 0; i < 3; i++) {
        pulled++;
        const entry = (j: number) => ({ topic: TOPIC, payload: new Uint8Array(1), sequenceId: BigInt(3 * i + j) });
        yield create(PublishRequestSchema, { message: entry(0), more: [entry(1), entry(2)] });
      }
    }
    const stream = publishStream(requests(), { signal: new AbortController().signal } as CallContext, {
      getTopic: async () => topic,
      maxPendingBytes: 1024 * 1024,
      maxPendingMessages: 4,
      maxMessagesPerRequest: 1_000,
      metrics: writerMetrics(new Registry()),
      draining: new AbortController().signal,
    });
    const answers: PublishResponse[] = [];
    const reading = (async () => {
      for await (const response of stream) answers.push(fromBinary(PublishResponseSchema, response.bytes));
    })();
    // Two requests are six entries, past the bound of four: the third request is not read.
    await eventually(() => submitted === 6, { description: 'two requests handed over' });
    await settle();
    expect([submitted, pulled, answers.length]).toEqual([6, 2, 0]);
    for (let i = 0; i < 2; i++) receipts[i]!.resolve(receipt(i));
    await settle();
    // Two of the first request's three entries are stored: it is not answered yet, and nothing more is read.
    expect([answers.length, pulled]).toEqual([0, 2]);
    receipts[2]!.resolve(receipt(2));
    await eventually(() => pulled === 3, { description: 'the third request read once the first is answered' });
    for (let i = 3; i < 9; i++) receipts[i]!.resolve(receipt(i));
    await reading;
    expect(answers.map((a) => [a.result.value?.sequenceId, ...a.more.map((m) => m.result.value?.sequenceId)])).toEqual([
      [0n, 1n, 2n],
      [3n, 4n, 5n],
      [6n, 7n, 8n],
    ]);
  });
});

describe('publish backpressure: the per-topic bound', () => {
  let backends: TestBackends;
  let store: FaultInjectingLedgerStore;
  let topic: OwnedTopic;
  const LIMIT_BYTES = 4 * 1024;

  beforeEach(async () => {
    store = new FaultInjectingLedgerStore(new InMemoryLedgerStore());
    backends = testBackends({ ledgerStore: store });
    topic = await openTestTopic(
      TOPIC,
      backends,
      { maxProducers: 10, producerInactivityMs: 3_600_000, snapshotIntervalEntries: 1_000, snapshotIntervalMs: 60_000 },
      {},
      LIMIT_BYTES,
    );
  });
  afterEach(async () => topic.unload('test finished'));

  it('holds at most maxPendingBytesPerTopic waiting for the ledger store, takes the rest as the store answers, and keeps the order', async () => {
    const gate = deferred<void>();
    let reached = false;
    store.faults.push({
      call: 'append',
      mode: 'pass',
      component: 'managed-ledger',
      until: gate.promise,
      reached: () => (reached = true),
    });
    let handed = 0;
    let mostPendingBytes = 0;
    const appendWith = topic.ledger.appendWith;
    jest.spyOn(topic.ledger, 'appendWith').mockImplementation((...args) => {
      handed++;
      mostPendingBytes = Math.max(mostPendingBytes, topic.pendingBytes);
      appendWith(...args);
    });
    // One request of 20 entries: it enters the topic's queue whole, and its entries leave as the bound lets them.
    const messages = Array.from({ length: 20 }, (_, i) => ({
      topic: TOPIC,
      payload: new Uint8Array(MESSAGE_BYTES),
      producerName: 'p',
      sequenceId: BigInt(i),
    }));
    const batch = new TopicBatch(messages as never, new ProducerFence(), undefined);
    topic.enqueue(batch);
    await eventually(() => reached, { description: 'the first append to reach the store' });
    await settle();
    // Each entry is a little over 1 KiB framed: three fit under 4 KiB; the rest wait, not buffered.
    expect(handed).toBe(3);
    expect(topic.pendingBytes).toBeLessThanOrEqual(LIMIT_BYTES);
    gate.resolve();
    await batch.answered;
    expect(batch.receipts.map((r) => r?.firstOffset)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(mostPendingBytes).toBeLessThanOrEqual(LIMIT_BYTES);
    expect(topic.pendingBytes).toBe(0);
  });
});
