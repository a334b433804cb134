import { create } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import { ConsumeRequestSchema, type ConsumeRequest } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import type { Consumer, ConsumerSink, DispatchEntry } from '@ledgerline/subscriptions';
import { consumeStream, type ConsumeSession } from './consume-stream.js';
import { OwnerReason } from './reasons.js';

const TOPIC = 'persistent://acme/orders/moving';

function context(): CallContext {
  return {
    method: '/ledgerline.v1.TopicsService/Consume',
    peer: 'test',
    deadlineMs: Infinity,
    signal: new AbortController().signal,
  } as CallContext;
}

async function* subscribeOnly(): AsyncGenerator<ConsumeRequest> {
  yield create(ConsumeRequestSchema, {
    command: { case: 'subscribe', value: { topic: TOPIC, subscription: 'moving', maxEntriesPerResponse: 10 } },
  });
  // The client keeps its side open, as a consumer does.
  await new Promise(() => undefined);
}

async function failureOf(stream: AsyncIterable<unknown>): Promise<LedgerlineError> {
  try {
    for await (const _response of stream);
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('the stream ended without a failure');
}

const cursorClosed = (): LedgerlineError =>
  new LedgerlineError('FAILED_PRECONDITION', ManagedLedgerReason.CURSOR_CLOSED, 'cursor moving is closed');

describe('consumeStream when the topic leaves the owner under the stream', () => {
  it('answers TOPIC_UNLOADED, not CURSOR_CLOSED, to a subscribe that meets a closed cursor', async () => {
    const error = await failureOf(consumeStream(subscribeOnly(), context(), () => Promise.reject(cursorClosed())));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', reason: OwnerReason.TOPIC_UNLOADED });
  });

  it('answers TOPIC_UNLOADED when the consumer ends because its cursor closed', async () => {
    const open = async (_subscribe: unknown, sink: ConsumerSink<DispatchEntry>) => {
      setImmediate(() => sink.close(cursorClosed()));
      const consumer = { active: true, close: () => undefined } as unknown as Consumer<DispatchEntry>;
      return {
        topic: TOPIC,
        consumer,
        markDelete: () => undefined,
        flush: () => Promise.resolve(),
        toResponse: () => ({}),
      } satisfies ConsumeSession<DispatchEntry>;
    };
    const error = await failureOf(consumeStream(subscribeOnly(), context(), open));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', reason: OwnerReason.TOPIC_UNLOADED });
    expect(error.message).toContain(TOPIC);
  });

  it('passes any other failure through unchanged', async () => {
    const refused = new LedgerlineError('FAILED_PRECONDITION', OwnerReason.ALREADY_SUBSCRIBED, 'taken');
    const error = await failureOf(consumeStream(subscribeOnly(), context(), () => Promise.reject(refused)));
    expect(error).toBe(refused);
  });
});
