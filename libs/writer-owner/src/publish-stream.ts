import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type { PublishRequest, PublishResponseSchema } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { ByteBudget } from './byte-budget.js';
import type { WriterMetrics } from './metrics.js';
import type { OwnedTopic, Receipt } from './owned-topic.js';
import { topicUnloaded } from './errors.js';
import { failureMessage, receiptMessage } from './proto-mapping.js';
import { WriterReason } from './reasons.js';

type Response = MessageInitShape<typeof PublishResponseSchema>;

export interface PublishStreamOptions {
  getTopic: (topic: string) => Promise<OwnedTopic>;
  maxPendingBytes: number;
  maxPendingMessages: number;
  /** The bound shared by every publish stream of the same client connection (see ConnectionBudgets). */
  connectionBudget?: ByteBudget;
  metrics: WriterMetrics;
  /** Aborted when the owner drains: stop reading, answer what was read, end the stream. */
  draining: AbortSignal;
}

/** A request's size as the bound counts it: its payloads (the framing is small beside them). */
function requestBytes(request: PublishRequest): number {
  const message = request.message;
  if (message === undefined) return 0;
  return message.payload.length + message.messages.reduce((sum, m) => sum + m.payload.length, 0);
}

/**
 * One Publish stream: requests are read, handed to their topic in order, and
 * answered in request order (a receipt once the ledger store holds the entry,
 * or a PublishFailure and the stream goes on). At most maxPendingBytes /
 * maxPendingMessages are read and not yet answered (and, with a
 * connectionBudget, at most its bound over all streams of the connection):
 * past that the stream stops reading, so gRPC flow control pushes back on the producer instead of
 * this process buffering. On drain, reading stops, what was read is answered,
 * and the stream ends (the producer re-sends the rest after a lookup).
 */
export async function* publishStream(
  requests: AsyncIterable<PublishRequest>,
  context: CallContext,
  options: PublishStreamOptions,
): AsyncIterable<Response> {
  const budget = new ByteBudget(options.maxPendingBytes);
  const answers: Array<Promise<Response>> = [];
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  let readerDone = false;
  let readerError: unknown;
  const reader = readAll(requests, context, options, budget, answers, notify).then(
    () => (readerDone = true),
    (error: unknown) => {
      readerDone = true;
      readerError = error;
    },
  );
  reader.finally(notify).catch(() => undefined);
  for (;;) {
    const next = answers.shift();
    if (next !== undefined) {
      yield await next;
      continue;
    }
    if (readerDone) break;
    await new Promise<void>((resolve) => (wake = resolve));
  }
  if (readerError !== undefined && !context.signal.aborted) throw readerError;
}

async function readAll(
  requests: AsyncIterable<PublishRequest>,
  context: CallContext,
  options: PublishStreamOptions,
  budget: ByteBudget,
  answers: Array<Promise<Response>>,
  notify: () => void,
): Promise<void> {
  const iterator = requests[Symbol.asyncIterator]();
  const drained = new Promise<'drained'>((resolve) => {
    if (options.draining.aborted) resolve('drained');
    options.draining.addEventListener('abort', () => resolve('drained'), { once: true });
  });
  let pendingMessages = 0;
  let submitted: Promise<unknown> = Promise.resolve();
  // A stream stays bound to the loaded topic it first reached: entries sent after ones the unloaded
  // topic refused must not land in the reloaded topic ahead of their resends (deduplication would
  // then skip the resends as old).
  const boundTopics = new Map<string, OwnedTopic>();
  const room = { wake: undefined as (() => void) | undefined };
  for (;;) {
    while (pendingMessages >= options.maxPendingMessages) await new Promise<void>((r) => (room.wake = r));
    const next = await Promise.race([iterator.next(), drained]);
    if (next === 'drained' || next.done === true) return;
    const request = next.value;
    const sizeBytes = requestBytes(request);
    const waiting = budget.acquire(sizeBytes, context.signal);
    if (waiting !== undefined) await Promise.race([waiting, drained]);
    const sharedWaiting = options.connectionBudget?.acquire(sizeBytes, context.signal);
    if (sharedWaiting !== undefined) await Promise.race([sharedWaiting, drained]);
    pendingMessages++;
    const startedMs = performance.now();
    // Each entry is handed to its topic only after the one before it, so the log keeps the stream's order.
    const handing = submitted.then(() => submit(request, options, boundTopics, context.signal));
    submitted = handing.catch(() => undefined);
    const answer = handing
      .then((handed) => handed.receipt)
      .then(
        (receipt: Receipt): Response => {
          options.metrics.publishLatency.observe((performance.now() - startedMs) / 1000);
          return { result: { case: 'receipt', value: receiptMessage(receipt) } };
        },
        (thrown: unknown): Response => {
          const failure = failureMessage(request.message?.sequenceId ?? 0n, thrown);
          options.metrics.publishFailures.inc({ reason: failure.reason ?? '' });
          return { result: { case: 'failure', value: failure } };
        },
      )
      .finally(() => {
        budget.release(sizeBytes);
        options.connectionBudget?.release(sizeBytes);
        pendingMessages--;
        room.wake?.();
        room.wake = undefined;
      });
    answers.push(answer);
    notify();
  }
}

async function submit(
  request: PublishRequest,
  options: PublishStreamOptions,
  boundTopics: Map<string, OwnedTopic>,
  signal: AbortSignal,
): Promise<{ receipt: Promise<Receipt> }> {
  const message = request.message;
  if (message === undefined) {
    throw new LedgerlineError('INVALID_ARGUMENT', WriterReason.INVALID_REQUEST, 'a publish request carries a message');
  }
  const topic = await options.getTopic(message.topic);
  const bound = boundTopics.get(message.topic);
  if (bound === undefined) boundTopics.set(message.topic, topic);
  else if (bound !== topic) throw topicUnloaded(message.topic, 'it was unloaded while this publish stream was open');
  return topic.submit(message, signal);
}
