import { create, fromBinary } from '@bufbuild/protobuf';
import { encodeMessageEntry } from '@ledgerline/message-format';
import { ConsumeRequestSchema, ConsumeResponseSchema, type ConsumeRequest } from '@ledgerline/proto';
import { EncodedMessage } from '@ledgerline/rpc';
import type { Consumer, ConsumerSink } from '@ledgerline/subscriptions';
import { entryDelivery } from './consume-response.js';
import { consumeStream, type ConsumeOutput, type WireConsumeSession } from './consume-stream.js';
import { writerEntry, type WriterEntry } from './writer-entry.js';
import { consumeCallContext } from './testing/consume-call-context.js';

const TOPIC = 'persistent://acme/orders/wire';

async function* subscribeOnly(maxEntriesPerResponse: number): AsyncGenerator<ConsumeRequest> {
  yield create(ConsumeRequestSchema, {
    command: { case: 'subscribe', value: { topic: TOPIC, subscription: 'wire', maxEntriesPerResponse } },
  });
  await new Promise(() => undefined);
}

function entryAt(entryId: number, payloadBytes = 16): WriterEntry {
  const payload = encodeMessageEntry({
    producerName: 'p',
    sequenceId: BigInt(entryId),
    publishTimeMs: 1,
    payload: new Uint8Array(payloadBytes).fill(entryId),
  });
  return writerEntry({
    position: { ledgerId: 3, entryId },
    payload,
    firstOffset: entryId,
    lastOffset: entryId,
    numMessages: 1,
    brokerTimestampMs: 1,
  });
}

/** A stream over a session writing its deliveries by hand; `sink` is what the consumer delivers through. */
function wireStream(maxEntriesPerResponse: number) {
  const opened: { sink?: ConsumerSink<WriterEntry> } = {};
  const open = async (_subscribe: unknown, sink: ConsumerSink<WriterEntry>) => {
    opened.sink = sink;
    return {
      topic: TOPIC,
      consumer: { active: true, close: () => undefined } as unknown as Consumer<WriterEntry>,
      markDelete: () => undefined,
      flush: () => Promise.resolve(),
      toWire: entryDelivery,
    } satisfies WireConsumeSession<WriterEntry>;
  };
  const responses = consumeStream(subscribeOnly(maxEntriesPerResponse), consumeCallContext(), open)[
    Symbol.asyncIterator
  ]();
  return { responses, sink: () => opened.sink! };
}

async function next(responses: AsyncIterator<ConsumeOutput>) {
  const result = await responses.next();
  if (result.done === true) throw new Error('the stream ended');
  const value = result.value;
  return value instanceof EncodedMessage ? { encoded: true, ...fromBinary(ConsumeResponseSchema, value.bytes) } : value;
}

const entryIds = (response: Awaited<ReturnType<typeof next>>) =>
  response.event?.case === 'entry'
    ? [response.event.value, ...(response.moreEntries ?? [])].map((e) => Number(e.position?.entryId))
    : [];

describe('consumeStream over a session that writes deliveries by hand', () => {
  const streams: AsyncIterator<ConsumeOutput>[] = [];
  afterEach(async () => {
    // Ends each stream as a client going away does: its consumer is closed.
    for (const stream of streams.splice(0)) await stream.return?.(undefined);
  });
  function opened(maxEntriesPerResponse: number) {
    const stream = wireStream(maxEntriesPerResponse);
    streams.push(stream.responses);
    return stream;
  }

  it('coalesces the entries ready at once into encoded responses of at most max_entries_per_response', async () => {
    const { responses, sink } = opened(3);
    expect((await next(responses)).event?.case).toBe('subscribed');
    for (let entryId = 0; entryId < 5; entryId++)
      sink().deliver({ entry: entryAt(entryId), redeliveryCount: 0, batchIndexes: undefined });
    const first = await next(responses);
    const second = await next(responses);
    expect([first, second].map((r) => 'encoded' in r)).toEqual([true, true]);
    expect([entryIds(first), entryIds(second)]).toEqual([
      [0, 1, 2],
      [3, 4],
    ]);
  });

  it('keeps an event between entries in its place, never carried past the entries around it', async () => {
    const { responses, sink } = opened(10);
    await next(responses);
    sink().deliver({ entry: entryAt(0), redeliveryCount: 0, batchIndexes: undefined });
    sink().activeChanged(false);
    sink().deliver({ entry: entryAt(1), redeliveryCount: 2, batchIndexes: undefined });
    const order = [await next(responses), await next(responses), await next(responses)];
    expect(order.map((r) => r.event?.case)).toEqual(['entry', 'activeConsumerChange', 'entry']);
    expect(order.map(entryIds)).toEqual([[0], [], [1]]);
    expect(order[2]!.event?.case === 'entry' && order[2]!.event.value.redeliveryCount).toBe(2);
  });

  it('starts a new response where the next entry would take one past its byte bound', async () => {
    const { responses, sink } = opened(1_000);
    await next(responses);
    // Three entries of 400 KiB: two fit in 1 MiB, the third goes in the next response.
    for (let entryId = 0; entryId < 3; entryId++) {
      sink().deliver({ entry: entryAt(entryId, 400 * 1024), redeliveryCount: 0, batchIndexes: undefined });
    }
    expect([entryIds(await next(responses)), entryIds(await next(responses))]).toEqual([[0, 1], [2]]);
  });
});
