import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason, topicUnloaded } from '@ledgerline/ownership';
import type { PublishMessage, PublishRequest, PublishResponseSchema } from '@ledgerline/proto';
import type { CallContext, EncodedMessage } from '@ledgerline/rpc';
import { ByteBudget } from './byte-budget.js';
import type { WriterMetrics } from './metrics.js';
import type { OwnedTopic } from './owned-topic.js';
import type { Receipt } from './receipts.js';
import { failureMessage } from './publish-mapping.js';
import { sequenceGap } from './errors.js';
import { encodePublishResponse, type PublishOutcome } from './publish-response.js';

type Response = EncodedMessage<typeof PublishResponseSchema>;
type Result = PublishOutcome;

export interface PublishStreamOptions {
  getTopic: (topic: string) => Promise<OwnedTopic>;
  maxPendingBytes: number;
  /** Entries read and not yet answered (each entry of a coalesced request counts). */
  maxPendingMessages: number;
  /** Entries one request may carry (message and more together); announced in every response. */
  maxMessagesPerRequest: number;
  /** The bound shared by every publish stream of the same client connection (see ConnectionBudgets). */
  connectionBudget?: ByteBudget;
  metrics: WriterMetrics;
  /** Aborted when the owner drains: stop reading, answer what was read, end the stream. */
  draining: AbortSignal;
}

/** The entries a request carries, in order; an absent `message` stays in its place and is refused. */
function entriesOf(request: PublishRequest): Array<PublishMessage | undefined> {
  return request.more.length === 0 ? [request.message] : [request.message, ...request.more];
}

/** A request's size as the bound counts it: its payloads (the framing is small beside them). */
function requestBytes(entries: ReadonlyArray<PublishMessage | undefined>): number {
  let sizeBytes = 0;
  for (const message of entries) {
    if (message === undefined) continue;
    sizeBytes += message.payload.length;
    for (const batched of message.messages) sizeBytes += batched.payload.length;
  }
  return sizeBytes;
}

/**
 * One Publish stream: requests are read, their entries handed to their topic
 * in order, and each request answered in request order once every entry it
 * carried is answered (a receipt once the ledger store holds the entry, or a
 * PublishFailure for that entry alone, and the stream goes on). At most
 * maxPendingBytes / maxPendingMessages are read and not yet answered (and, with a
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

/** What one stream remembers while reading. */
interface StreamState {
  readonly options: PublishStreamOptions;
  readonly signal: AbortSignal;
  /**
   * A stream stays bound to the loaded topic it first reached: entries sent after ones the unloaded
   * topic refused must not land in the reloaded topic ahead of their resends (deduplication would
   * then skip the resends as old).
   */
  readonly boundTopics: Map<string, OwnedTopic>;
  /**
   * Per topic and producer, the lowest sequence id this stream refused with a
   * failure the producer answers by sending it again (the topic could not be
   * loaded, it moved, the store was away): a later id of that producer on this
   * stream is refused too until that one comes again, or it would be stored
   * ahead of it and its resend taken for a duplicate of something never stored.
   */
  readonly refusedFrom: Map<string, bigint>;
}

/** Producers fenced per stream, at most; past it the oldest fence is dropped (a stream carries few producers). */
const MAX_FENCED_PRODUCERS = 10_000;

function fenceKey(message: PublishMessage): string {
  return `${message.topic}\n${message.producerName}`;
}

/** A failure the producer answers by sending the entry again, in order, rather than giving it up. */
function resentAfter(thrown: unknown): boolean {
  const error = LedgerlineError.from(thrown);
  return error.retryable || error.reason === OwnerReason.NOT_OWNER || error.reason === OwnerReason.TOPIC_UNLOADED;
}

/** Records that `message` was refused, when its producer will send it again. */
function fence(state: StreamState, message: PublishMessage | undefined, thrown: unknown): void {
  if (message === undefined || message.producerName === '' || !resentAfter(thrown)) return;
  const key = fenceKey(message);
  const known = state.refusedFrom.get(key);
  if (known !== undefined && known <= message.sequenceId) return;
  state.refusedFrom.delete(key);
  state.refusedFrom.set(key, message.sequenceId);
  if (state.refusedFrom.size > MAX_FENCED_PRODUCERS) state.refusedFrom.delete(state.refusedFrom.keys().next().value!);
}

/** SEQUENCE_GAP when `message` would overtake an earlier entry of its producer this stream refused. */
function overtaking(state: StreamState, message: PublishMessage | undefined): LedgerlineError | undefined {
  // Almost always nothing is fenced: no key is built for every entry on the hot path then.
  if (state.refusedFrom.size === 0 || message === undefined || message.producerName === '') return undefined;
  const key = fenceKey(message);
  const from = state.refusedFrom.get(key);
  if (from === undefined) return undefined;
  if (message.sequenceId <= from) {
    state.refusedFrom.delete(key); // The refused entry comes again: the order is whole from here.
    return undefined;
  }
  return sequenceGap(message.producerName, message.sequenceId, from);
}

async function readAll(
  requests: AsyncIterable<PublishRequest>,
  context: CallContext,
  options: PublishStreamOptions,
  budget: ByteBudget,
  answers: Array<Promise<Response>>,
  notify: () => void,
): Promise<void> {
  // The drain signal is the owner's and outlives this stream: its listener goes when the stream does.
  let onDrain = (): void => undefined;
  const drained = new Promise<'drained'>((resolve) => (onDrain = () => resolve('drained')));
  if (options.draining.aborted) onDrain();
  else options.draining.addEventListener('abort', onDrain, { once: true });
  try {
    await readUntil(drained, requests, context, options, budget, answers, notify);
  } finally {
    options.draining.removeEventListener('abort', onDrain);
  }
}

/** The read loop of readAll: takes requests until the client ends the stream or the owner drains. */
async function readUntil(
  drained: Promise<'drained'>,
  ...[requests, context, options, budget, answers, notify]: Parameters<typeof readAll>
): Promise<void> {
  const iterator = requests[Symbol.asyncIterator]();
  const state: StreamState = { options, signal: context.signal, boundTopics: new Map(), refusedFrom: new Map() };
  let pendingMessages = 0;
  let submitted: Promise<unknown> = Promise.resolve();
  const room = { wake: undefined as (() => void) | undefined };
  for (;;) {
    while (pendingMessages >= options.maxPendingMessages) await new Promise<void>((r) => (room.wake = r));
    const next = await Promise.race([iterator.next(), drained]);
    if (next === 'drained' || next.done === true) return;
    const entries = entriesOf(next.value);
    const sizeBytes = requestBytes(entries);
    const waiting = budget.acquire(sizeBytes, context.signal);
    if (waiting !== undefined) await Promise.race([waiting, drained]);
    const sharedWaiting = options.connectionBudget?.acquire(sizeBytes, context.signal);
    if (sharedWaiting !== undefined) await Promise.race([sharedWaiting, drained]);
    pendingMessages += entries.length;
    const startedMs = performance.now();
    // Each entry is handed to its topic only after the one before it, so the log keeps the stream's order.
    const handing = submitted.then(() => handAll(entries, state, startedMs));
    submitted = handing;
    const answer = handing
      .then((results) => Promise.all(results))
      .then((results) => encodePublishResponse(results, options.maxMessagesPerRequest))
      .finally(() => {
        budget.release(sizeBytes);
        options.connectionBudget?.release(sizeBytes);
        pendingMessages -= entries.length;
        room.wake?.();
        room.wake = undefined;
      });
    answers.push(answer);
    notify();
  }
}

/**
 * Hands every entry of one request to its topic, in order, and never throws:
 * an entry that is refused gets its failure, and the entries after it are
 * handed on as they would be in requests of their own.
 */
async function handAll(
  entries: ReadonlyArray<PublishMessage | undefined>,
  state: StreamState,
  startedMs: number,
): Promise<Array<Result | Promise<Result>>> {
  const limit = state.options.maxMessagesPerRequest;
  if (entries.length > limit) {
    const error = new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `a publish request carries at most ${limit} entries; this one carried ${entries.length}`,
      { details: { maxMessagesPerRequest: String(limit) } },
    );
    return entries.map((message) => failed(message, error, state.options.metrics));
  }
  const results: Array<Result | Promise<Result>> = [];
  for (const message of entries) {
    const gap = overtaking(state, message);
    if (gap !== undefined) {
      results.push(failed(message, gap, state.options.metrics));
      continue;
    }
    try {
      const { receipt } = await submit(message, state);
      results.push(
        receipt.then(
          (stored) => receiptResult(stored, startedMs, state.options.metrics),
          (thrown: unknown) => {
            fence(state, message, thrown);
            return failed(message, thrown, state.options.metrics);
          },
        ),
      );
    } catch (thrown) {
      fence(state, message, thrown);
      results.push(failed(message, thrown, state.options.metrics));
    }
  }
  return results;
}

function receiptResult(receipt: Receipt, startedMs: number, metrics: WriterMetrics): Result {
  metrics.publishLatency.observe((performance.now() - startedMs) / 1000);
  return { receipt };
}

function failed(message: PublishMessage | undefined, thrown: unknown, metrics: WriterMetrics): Result {
  const failure = failureMessage(message?.sequenceId ?? 0n, thrown);
  metrics.publishFailures.inc({ reason: failure.reason ?? '' });
  return { failure };
}

async function submit(message: PublishMessage | undefined, state: StreamState): Promise<{ receipt: Promise<Receipt> }> {
  if (message === undefined) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'a publish request carries a message');
  }
  const bound = state.boundTopics.get(message.topic);
  if (bound !== undefined) {
    // The topic this stream is bound to, while loaded, is the one the registry would name: skip the lookup.
    if (!bound.unloaded) return bound.submit(message, state.signal);
    // Unloaded, it refuses every later entry of this stream with what it was unloaded with (after a transfer,
    // NOT_OWNER naming the new owner) at once: a lookup per entry would hold the stream's answers back.
    bound.checkLoaded();
    throw topicUnloaded(message.topic, 'it was unloaded while this publish stream was open');
  }
  const topic = await state.options.getTopic(message.topic);
  state.boundTopics.set(message.topic, topic);
  return topic.submit(message, state.signal);
}
