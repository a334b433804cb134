import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { CursorCodecReason, DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import {
  AckReceiptSchema,
  ConsumeRequestSchema,
  PositionSchema,
  type ConsumeRequest,
  type ConsumeResponse,
} from '@ledgerline/proto';
import { Subscription, SubscriptionType, type ConsumerSink } from '@ledgerline/subscriptions';
import { InMemorySource, type TestEntry } from '@ledgerline/subscriptions/testing';
import { consumeStream, type ConsumeOutput, type WireConsumeSession } from './consume-stream.js';
import { positionMessage } from './proto-mapping.js';
import { consumeCallContext } from './testing/consume-call-context.js';
import { consumeResponseOf, reflectedEntry } from './testing/consume-responses.js';

const TOPIC = 'persistent://acme/orders/acks';
const LEDGER = BigInt(InMemorySource.LEDGER_ID);

type Command = MessageInitShape<typeof ConsumeRequestSchema>['command'];

/** The client's side of a Consume stream: requests pushed by the test, ended when it says. */
class Requests implements AsyncIterable<ConsumeRequest> {
  private readonly items: ConsumeRequest[] = [];
  private wake: (() => void) | undefined;
  private ended = false;

  send(command: Command): void {
    this.items.push(create(ConsumeRequestSchema, { command }));
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ConsumeRequest> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) yield next;
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

const subscriptions: Subscription<TestEntry>[] = [];

function setup(entries: number) {
  const source = new InMemorySource();
  for (let i = 0; i < entries; i++) source.append();
  const subscription = new Subscription<TestEntry>({ name: 'acks', source });
  subscriptions.push(subscription);
  return { source, subscription };
}

/** Opens a Consume stream over the subscription, as an owner does (an Exclusive consumer). */
function open(subscription: Subscription<TestEntry>, source: InMemorySource) {
  const requests = new Requests();
  requests.send({ case: 'subscribe', value: { topic: TOPIC, subscription: 'acks', maxEntriesPerResponse: 100 } });
  const openSession = async (_subscribe: unknown, sink: ConsumerSink<TestEntry>) =>
    ({
      topic: TOPIC,
      consumer: subscription.addConsumer({ name: 'c', type: SubscriptionType.EXCLUSIVE, sink }),
      markDelete: () => source.markDeletePosition(),
      flush: () => Promise.resolve(),
      toWire: (d) => reflectedEntry({ position: positionMessage(d.entry.position) }),
    }) satisfies WireConsumeSession<TestEntry>;
  const responses = consumeStream(requests, consumeCallContext(), openSession)[Symbol.asyncIterator]();
  return { requests, responses };
}

async function next(responses: AsyncIterator<ConsumeOutput>): Promise<ConsumeResponse> {
  const result = await responses.next();
  if (result.done === true) throw new Error('the stream ended');
  return consumeResponseOf(result.value);
}

/** Waits for entries until `count` arrived; their entry ids. */
async function entryIds(responses: AsyncIterator<ConsumeOutput>, count: number): Promise<number[]> {
  const ids: number[] = [];
  while (ids.length < count) {
    const response = await next(responses);
    if (response.event.case !== 'entry') continue;
    for (const entry of [response.event.value, ...response.moreEntries]) {
      ids.push(Number(entry.position?.entryId));
    }
  }
  return ids;
}

async function failure(responses: AsyncIterator<ConsumeOutput>): Promise<LedgerlineError> {
  try {
    for (;;) if ((await responses.next()).done === true) break;
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('the stream ended without a failure');
}

const at = (entryId: number) => ({ ledgerId: LEDGER, entryId: BigInt(entryId) });
const range = (first: number, last: number, ledgerId = LEDGER) => ({
  ledgerId,
  firstEntryId: BigInt(first),
  lastEntryId: BigInt(last),
});

afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
});

describe('acks checked where the Consume stream takes them', () => {
  it('refuses an ack over maxAckPositionsPerCall with INVALID_ARGUMENT LIMIT_EXCEEDED, applying none of it', async () => {
    const { source, subscription } = setup(3);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    requests.send({ case: 'flow', value: { permits: 3 } });
    expect(await entryIds(responses, 3)).toEqual([0, 1, 2]);
    const sent = DATA_PATH_LIMITS.maxAckPositionsPerCall + 1;
    const positions = Array.from({ length: sent }, (_, i) => at(i % 3));
    requests.send({ case: 'ack', value: { positions } });
    const error = await failure(responses);
    expect(error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: CursorCodecReason.LIMIT_EXCEEDED,
      details: {
        limit: 'maxAckPositionsPerCall',
        max: String(DATA_PATH_LIMITS.maxAckPositionsPerCall),
        sent: String(sent),
      },
    });
    expect(error.message).toContain(`maxAckPositionsPerCall is ${DATA_PATH_LIMITS.maxAckPositionsPerCall}`);
    expect(error.message).toContain(String(sent));
    expect([0, 1, 2].some((entryId) => source.isAcknowledged({ ledgerId: 1, entryId }))).toBe(false);
  });

  it('refuses a nack over the same limit', async () => {
    const { source, subscription } = setup(1);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    const positions = Array.from({ length: DATA_PATH_LIMITS.maxAckPositionsPerCall + 1 }, () => at(0));
    requests.send({ case: 'nack', value: { positions } });
    expect(await failure(responses)).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: CursorCodecReason.LIMIT_EXCEEDED,
    });
  });

  it.each([
    ['an individual ack', { positions: [at(0), at(-1)] }],
    ['a cumulative ack', { positions: [at(0)], cumulative: at(-1) }],
    [
      'a batch-index ack',
      { positions: [at(0)], batchIndexAcks: [{ position: at(-1), ackedIndexes: [0], batchSize: 2 }] },
    ],
  ])('refuses %s at entry -1 with INVALID_ARGUMENT INVALID_POSITION, applying none of the ack', async (_what, ack) => {
    const { source, subscription } = setup(2);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    requests.send({ case: 'flow', value: { permits: 2 } });
    await entryIds(responses, 2);
    requests.send({ case: 'ack', value: ack });
    const error = await failure(responses);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: CursorCodecReason.INVALID_POSITION });
    expect(error.message).toContain('entryId must name an entry');
    expect(source.isAcknowledged({ ledgerId: 1, entryId: 0 })).toBe(false);
  });

  it('keeps what a consumer acknowledged of a range when it disconnects halfway through', async () => {
    const { source, subscription } = setup(10);
    const first = open(subscription, source);
    await next(first.responses);
    first.requests.send({ case: 'flow', value: { permits: 10 } });
    expect(await entryIds(first.responses, 10)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    first.requests.send({ case: 'ack', value: { positions: [0, 1, 2, 3, 4].map(at), requestId: 1n } });
    const receipt = await next(first.responses);
    expect(receipt.event).toEqual({ case: 'ackReceipt', value: create(AckReceiptSchema, { requestId: 1n }) });
    first.requests.end();
    expect((await first.responses.next()).done).toBe(true);

    const second = open(subscription, source);
    const subscribed = await next(second.responses);
    expect(subscribed.event.case === 'subscribed' && subscribed.event.value.markDelete).toEqual(
      create(PositionSchema, at(4)),
    );
    second.requests.send({ case: 'flow', value: { permits: 10 } });
    expect(await entryIds(second.responses, 5)).toEqual([5, 6, 7, 8, 9]);
    second.requests.end();
  });

  it('keeps what a consumer acknowledged as a range when it disconnects halfway through the entries it received', async () => {
    const { source, subscription } = setup(10);
    const first = open(subscription, source);
    await next(first.responses);
    first.requests.send({ case: 'flow', value: { permits: 10 } });
    expect(await entryIds(first.responses, 10)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    first.requests.send({ case: 'ack', value: { ranges: [range(0, 2)], positions: [at(4)], requestId: 1n } });
    expect((await next(first.responses)).event).toEqual({
      case: 'ackReceipt',
      value: create(AckReceiptSchema, { requestId: 1n }),
    });
    first.requests.end();
    expect((await first.responses.next()).done).toBe(true);

    const second = open(subscription, source);
    const subscribed = await next(second.responses);
    expect(subscribed.event.case === 'subscribed' && subscribed.event.value.markDelete).toEqual(
      create(PositionSchema, at(2)),
    );
    second.requests.send({ case: 'flow', value: { permits: 10 } });
    expect(await entryIds(second.responses, 6)).toEqual([3, 5, 6, 7, 8, 9]);
    second.requests.end();
  });
});

describe('ranges in an Ack', () => {
  it('are announced in Subscribed, so a client sends them only to an owner that applies them', async () => {
    const { source, subscription } = setup(1);
    const { requests, responses } = open(subscription, source);
    const subscribed = await next(responses);
    expect(subscribed.event).toMatchObject({ case: 'subscribed', value: { acceptsAckRanges: true } });
    requests.end();
  });

  it('settle what they name beside single positions, and nothing else', async () => {
    const { source, subscription } = setup(8);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    requests.send({ case: 'flow', value: { permits: 8 } });
    await entryIds(responses, 8);
    requests.send({ case: 'ack', value: { ranges: [range(1, 3), range(5, 5)], positions: [at(7)], requestId: 1n } });
    expect((await next(responses)).event).toEqual({
      case: 'ackReceipt',
      value: create(AckReceiptSchema, { requestId: 1n }),
    });
    const acked = [0, 1, 2, 3, 4, 5, 6, 7].filter((entryId) => source.isAcknowledged({ ledgerId: 1, entryId }));
    expect(acked).toEqual([1, 2, 3, 5, 7]);
    expect((await subscription.stats()).unackedMessages).toBe(3);
    requests.end();
  });

  it.each([
    ['running backwards', range(3, 2), /runs backwards/],
    ['starting at entry -1', { ...range(0, 2), firstEntryId: -1n }, /entryId must name an entry/],
    ['past 2^53-1', { ...range(0, 2), lastEntryId: 2n ** 53n }, /entryId must name an entry/],
  ])(
    'refuses a range %s with INVALID_ARGUMENT INVALID_POSITION, applying none of the ack',
    async (_what, bad, message) => {
      const { source, subscription } = setup(4);
      const { requests, responses } = open(subscription, source);
      await next(responses);
      requests.send({ case: 'flow', value: { permits: 4 } });
      await entryIds(responses, 4);
      requests.send({ case: 'ack', value: { positions: [at(0)], ranges: [range(1, 2), bad] } });
      const error = await failure(responses);
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', reason: CursorCodecReason.INVALID_POSITION });
      expect(error.message).toMatch(message);
      expect([0, 1, 2, 3].some((entryId) => source.isAcknowledged({ ledgerId: 1, entryId }))).toBe(false);
    },
  );

  it('count as the entries they name: one range past maxAckPositionsPerCall is LIMIT_EXCEEDED, applying none', async () => {
    const max = DATA_PATH_LIMITS.maxAckPositionsPerCall;
    const { source, subscription } = setup(3);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    requests.send({ case: 'ack', value: { positions: [at(0)], ranges: [range(1, 2), range(0, max - 3)] } });
    const error = await failure(responses);
    expect(error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: CursorCodecReason.LIMIT_EXCEEDED,
      details: { limit: 'maxAckPositionsPerCall', max: String(max), sent: String(max + 1) },
    });
    expect([0, 1, 2].some((entryId) => source.isAcknowledged({ ledgerId: 1, entryId }))).toBe(false);
  });

  it('refuses a range naming entries the topic does not have, applying none of the ack', async () => {
    const { source, subscription } = setup(4);
    const { requests, responses } = open(subscription, source);
    await next(responses);
    requests.send({ case: 'ack', value: { positions: [at(0)], ranges: [range(1, 2), range(2, 4)] } });
    expect(await failure(responses)).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect([0, 1, 2, 3].some((entryId) => source.isAcknowledged({ ledgerId: 1, entryId }))).toBe(false);
  });
});
