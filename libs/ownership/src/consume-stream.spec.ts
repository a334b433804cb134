import { create } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import { ConsumeRequestSchema, type ConsumeRequest } from '@ledgerline/proto';
import type { Consumer, ConsumerSink, DispatchEntry } from '@ledgerline/subscriptions';
import { consumeStream, MAX_RECEIPTS_OWED, type ConsumeOutput, type WireConsumeSession } from './consume-stream.js';
import { OwnerReason } from './reasons.js';
import { consumeCallContext } from './testing/consume-call-context.js';
import { consumeResponseOf, reflectedEntry } from './testing/consume-responses.js';

const TOPIC = 'persistent://acme/orders/moving';

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
    const error = await failureOf(
      consumeStream(subscribeOnly(), consumeCallContext(), () => Promise.reject(cursorClosed())),
    );
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
        toWire: () => reflectedEntry({}),
      } satisfies WireConsumeSession<DispatchEntry>;
    };
    const error = await failureOf(consumeStream(subscribeOnly(), consumeCallContext(), open));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', reason: OwnerReason.TOPIC_UNLOADED });
    expect(error.message).toContain(TOPIC);
  });

  it('passes any other failure through unchanged', async () => {
    const refused = new LedgerlineError('FAILED_PRECONDITION', OwnerReason.ALREADY_SUBSCRIBED, 'taken');
    const error = await failureOf(consumeStream(subscribeOnly(), consumeCallContext(), () => Promise.reject(refused)));
    expect(error).toBe(refused);
  });
});

describe('consumeStream ack receipts', () => {
  /** A session whose cursor flushes wait for `flushed`; records what the consumer was given. */
  function session(flushed: () => Promise<void>) {
    const calls: string[] = [];
    const consumer = {
      active: true,
      close: () => undefined,
      acknowledgeChecked: async () => void calls.push('ack'),
      flow: (permits: number) => void calls.push(`flow ${permits}`),
    } as unknown as Consumer<DispatchEntry>;
    const open = async () =>
      ({
        topic: TOPIC,
        consumer,
        markDelete: () => undefined,
        flush: flushed,
        toWire: () => reflectedEntry({}),
      }) satisfies WireConsumeSession<DispatchEntry>;
    return { calls, open };
  }

  const subscribe = create(ConsumeRequestSchema, {
    command: { case: 'subscribe', value: { topic: TOPIC, subscription: 'moving', maxEntriesPerResponse: 10 } },
  });
  const ack = (requestId: bigint) =>
    create(ConsumeRequestSchema, {
      command: { case: 'ack', value: { positions: [{ ledgerId: 1n, entryId: 0n }], requestId } },
    });
  const flow = create(ConsumeRequestSchema, { command: { case: 'flow', value: { permits: 5 } } });

  function gate(): { promise: Promise<void>; open(): void; fail(error: Error): void } {
    let open!: () => void;
    let fail!: (error: Error) => void;
    const promise = new Promise<void>((resolve, reject) => ((open = resolve), (fail = reject)));
    return { promise, open, fail };
  }

  const receiptsIn = (outputs: ConsumeOutput[]) =>
    outputs.map(consumeResponseOf).flatMap((r) => (r.event.case === 'ackReceipt' ? [r.event.value.requestId] : []));

  it('reads the next requests while a receipt waits for its cursor write, and sends the receipt once it is done', async () => {
    const write = gate();
    const { calls, open } = session(() => write.promise);
    const flowSeen = gate();
    async function* requests(): AsyncGenerator<ConsumeRequest> {
      yield subscribe;
      yield ack(7n);
      yield flow;
      flowSeen.open();
      await new Promise(() => undefined);
    }
    const stream = consumeStream(requests(), consumeCallContext(), open)[Symbol.asyncIterator]();
    expect(consumeResponseOf((await stream.next()).value).event.case).toBe('subscribed');
    // Asking for the next response lets the stream read requests; it answers once the receipt is there.
    const receipt = stream.next();
    // The flow permits reach the consumer although the ack's cursor write has not answered.
    await flowSeen.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toEqual(['ack', 'flow 5']);
    write.open();
    expect(receiptsIn([(await receipt).value])).toEqual([7n]);
  });

  it('ends the stream with the cursor write failure, as a failed request', async () => {
    const write = gate();
    const { open } = session(() => write.promise);
    async function* requests(): AsyncGenerator<ConsumeRequest> {
      yield subscribe;
      yield ack(7n);
      write.fail(new LedgerlineError('ABORTED', ManagedLedgerReason.CURSOR_FENCED, 'another owner took the cursor'));
      await new Promise(() => undefined);
    }
    const error = await failureOf(consumeStream(requests(), consumeCallContext(), open));
    expect(error).toMatchObject({ reason: ManagedLedgerReason.CURSOR_FENCED });
  });

  it('sends the receipts owed before ending when the client half-closes right after its acks', async () => {
    const write = gate();
    const { open } = session(() => write.promise);
    async function* requests(): AsyncGenerator<ConsumeRequest> {
      yield subscribe;
      yield ack(7n);
      yield ack(8n);
      setImmediate(() => write.open());
    }
    const responses = [];
    for await (const response of consumeStream(requests(), consumeCallContext(), open)) responses.push(response);
    expect(receiptsIn(responses)).toEqual([7n, 8n]);
  });

  it(`reads no more requests while ${MAX_RECEIPTS_OWED} receipts are owed, and goes on once they are sent`, async () => {
    const write = gate();
    const { calls, open } = session(() => write.promise);
    const flowRead = gate();
    async function* requests(): AsyncGenerator<ConsumeRequest> {
      yield subscribe;
      for (let id = 1; id <= MAX_RECEIPTS_OWED; id++) yield ack(BigInt(id));
      yield flow;
      flowRead.open();
      await new Promise(() => undefined);
    }
    const stream = consumeStream(requests(), consumeCallContext(), open)[Symbol.asyncIterator]();
    await stream.next();
    const firstReceipt = stream.next();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // Every ack was taken, the flow behind them was not read: the receipts owed hold the stream.
    expect(calls.filter((call) => call === 'ack')).toHaveLength(MAX_RECEIPTS_OWED);
    expect(calls).not.toContain('flow 5');
    write.open();
    await flowRead.promise;
    expect(receiptsIn([(await firstReceipt).value])).toEqual([1n]);
  });
});

describe('consumeStream receipts that ride on the next snapshot', () => {
  it('waits for the cursor writes made anyway when the Ack asks for it, and writes at once otherwise', async () => {
    const asked: string[] = [];
    const consumer = {
      active: true,
      close: () => undefined,
      acknowledgeChecked: async () => undefined,
    } as unknown as Consumer<DispatchEntry>;
    const open = async () =>
      ({
        topic: TOPIC,
        consumer,
        markDelete: () => undefined,
        flush: async () => void asked.push('flush'),
        persisted: async () => void asked.push('persisted'),
        toWire: () => reflectedEntry({}),
      }) satisfies WireConsumeSession<DispatchEntry>;
    const ack = (requestId: bigint, receiptWithNextSnapshot: boolean) =>
      create(ConsumeRequestSchema, { command: { case: 'ack', value: { requestId, receiptWithNextSnapshot } } });
    async function* requests(): AsyncGenerator<ConsumeRequest> {
      yield create(ConsumeRequestSchema, {
        command: { case: 'subscribe', value: { topic: TOPIC, subscription: 'moving', maxEntriesPerResponse: 10 } },
      });
      yield ack(1n, true);
      yield ack(2n, false);
    }
    const receipts = [];
    for await (const output of consumeStream(requests(), consumeCallContext(), open)) {
      const response = consumeResponseOf(output);
      if (response.event.case === 'ackReceipt') receipts.push(response.event.value.requestId);
    }
    expect(asked).toEqual(['persisted', 'flush']);
    expect(receipts).toEqual([1n, 2n]);
  });
});
