import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason, topicUnloaded } from '@ledgerline/ownership';
import type { PublishMessage, PublishRequest, PublishResponseSchema } from '@ledgerline/proto';
import type { CallContext, EncodedMessage } from '@ledgerline/rpc';
import { ByteBudget } from './byte-budget.js';
import type { WriterMetrics } from './metrics.js';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { failureMessage } from './publish-mapping.js';
import { encodePublishResponse, type PublishOutcome } from './publish-response.js';
import { TraceStage } from './stage-trace.js';
import { TopicBatch } from './topic-batch.js';
import { nextTurn, overTurnBudget } from './turn-budget.js';

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

/** A topic this stream is looking up, and the batches for it read meanwhile, in order. */
class Lookup {
  readonly waiting: TopicBatch[] = [];
}

/** What one stream remembers while reading. */
interface StreamState {
  readonly options: PublishStreamOptions;
  readonly signal: AbortSignal;
  /**
   * A stream stays bound to the loaded topic it first reached: entries sent after ones the unloaded
   * topic refused must not land in the reloaded topic ahead of their resends (deduplication would
   * then skip the resends as old). A topic being looked up holds the batches read meanwhile.
   */
  readonly boundTopics: Map<string, OwnedTopic | Lookup>;
  /** The stream's producers' order after a refusal, which every topic it reaches asks. */
  readonly fence: ProducerFence;
}

/**
 * The owner's drain as the read loop waits for it beside each request: one wait at a time, and nothing left
 * behind once it is over. A race against one promise that settles only at the drain left a reaction on that
 * promise per wait, and each reaction kept the request it was raced with (its payload and the gRPC frame
 * under it) for as long as the stream stayed open.
 */
class DrainWatch {
  private wake: (() => void) | undefined;
  private drained = false;

  readonly onDrain = (): void => {
    this.drained = true;
    this.wake?.();
  };

  /** `work`'s value, or 'drained' when the owner drains first. */
  race<T>(work: Promise<T>): Promise<T | 'drained'> {
    if (this.drained) return Promise.resolve('drained');
    return new Promise<T | 'drained'>((resolve, reject) => {
      this.wake = () => resolve('drained');
      work.then(
        (value) => {
          this.wake = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.wake = undefined;
          reject(error);
        },
      );
    });
  }
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
  const drain = new DrainWatch();
  if (options.draining.aborted) drain.onDrain();
  else options.draining.addEventListener('abort', drain.onDrain, { once: true });
  try {
    await readUntil(drain, requests, context, options, budget, answers, notify);
  } finally {
    options.draining.removeEventListener('abort', drain.onDrain);
  }
}

/**
 * The read loop of readAll: takes requests until the client ends the stream or the owner drains. A request's
 * entries enter their topic's queue in the turn that read them (after the stream's and the connection's
 * budgets, which hold the reading, not the entries already read): the order is fixed there, once.
 */
async function readUntil(
  drain: DrainWatch,
  ...[requests, context, options, budget, answers, notify]: Parameters<typeof readAll>
): Promise<void> {
  const iterator = requests[Symbol.asyncIterator]();
  const state: StreamState = { options, signal: context.signal, boundTopics: new Map(), fence: new ProducerFence() };
  let pendingMessages = 0;
  const room = { wake: undefined as (() => void) | undefined };
  for (;;) {
    while (pendingMessages >= options.maxPendingMessages) await new Promise<void>((r) => (room.wake = r));
    const next = await drain.race(iterator.next());
    if (next === 'drained' || next.done === true) return;
    const entries = entriesOf(next.value);
    const sizeBytes = requestBytes(entries);
    const waiting = budget.acquire(sizeBytes, context.signal);
    if (waiting !== undefined) await drain.race(waiting);
    const sharedWaiting = options.connectionBudget?.acquire(sizeBytes, context.signal);
    if (sharedWaiting !== undefined) await drain.race(sharedWaiting);
    pendingMessages += entries.length;
    const answer = handOver(entries, state, performance.now())
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
    if (overTurnBudget()) await nextTurn();
  }
}

/**
 * Hands one request's entries to their topics, synchronously (a topic being looked up takes them once it
 * is found), and resolves with every entry's answer, in order; never rejects: an entry that is refused gets
 * its failure, and the others go on as they would in requests of their own.
 */
function handOver(
  entries: ReadonlyArray<PublishMessage | undefined>,
  state: StreamState,
  startedMs: number,
): Promise<Result[]> {
  const { metrics, maxMessagesPerRequest: limit } = state.options;
  if (entries.length > limit) {
    const error = new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `a publish request carries at most ${limit} entries; this one carried ${entries.length}`,
      { details: { maxMessagesPerRequest: String(limit) } },
    );
    return Promise.resolve(entries.map((message) => failed(message, error, metrics)));
  }
  const topic = entries[0]?.topic;
  if (entries.every((message) => message !== undefined && message.topic === topic)) {
    // The common case: every entry for one topic, one batch.
    const batch = new TopicBatch(entries as PublishMessage[], state.fence, state.signal);
    batch.times.readMs = startedMs;
    deliver(batch, state);
    return batch.answered.then(() => outcomes(batch, startedMs, metrics));
  }
  return handMixed(entries, state, startedMs);
}

/** handOver for a request whose entries go to several topics (or lack a message): one batch per topic. */
async function handMixed(
  entries: ReadonlyArray<PublishMessage | undefined>,
  state: StreamState,
  startedMs: number,
): Promise<Result[]> {
  const { metrics } = state.options;
  const results: Result[] = new Array<Result>(entries.length);
  const byTopic = new Map<string, { messages: PublishMessage[]; places: number[] }>();
  entries.forEach((message, place) => {
    if (message === undefined) {
      const error = new LedgerlineError(
        'INVALID_ARGUMENT',
        OwnerReason.INVALID_REQUEST,
        'a publish request carries a message',
      );
      results[place] = failed(message, error, metrics);
      return;
    }
    let group = byTopic.get(message.topic);
    if (group === undefined) byTopic.set(message.topic, (group = { messages: [], places: [] }));
    group.messages.push(message);
    group.places.push(place);
  });
  const batches = [...byTopic.values()].map((group) => {
    const batch = new TopicBatch(group.messages, state.fence, state.signal);
    batch.times.readMs = startedMs;
    deliver(batch, state);
    return { batch, places: group.places };
  });
  for (const { batch, places } of batches) {
    await batch.answered;
    outcomes(batch, startedMs, metrics).forEach((result, index) => (results[places[index]!] = result));
  }
  return results;
}

/** Puts `batch` into its topic's queue now, or behind the lookup of the topic under way. */
function deliver(batch: TopicBatch, state: StreamState): void {
  const name = batch.messages[0]!.topic;
  const bound = state.boundTopics.get(name);
  if (bound === undefined) {
    lookUp(name, batch, state);
  } else if (bound instanceof Lookup) {
    bound.waiting.push(batch);
  } else if (!bound.unloaded) {
    // The topic this stream is bound to, while loaded, is the one the registry would name: skip the lookup.
    bound.enqueue(batch);
  } else {
    // Unloaded, it refuses every later entry of this stream with what it was unloaded with (after a transfer,
    // NOT_OWNER naming the new owner) at once: a lookup per entry would hold the stream's answers back.
    let error: unknown = topicUnloaded(name, 'it was unloaded while this publish stream was open');
    try {
      bound.checkLoaded();
    } catch (unloaded) {
      error = unloaded;
    }
    batch.refuseRest(error);
  }
}

/** Looks `name` up for this stream; the batches read meanwhile wait for it, in order. */
function lookUp(name: string, first: TopicBatch, state: StreamState): void {
  const lookup = new Lookup();
  lookup.waiting.push(first);
  state.boundTopics.set(name, lookup);
  Promise.resolve(name)
    .then(state.options.getTopic)
    .then(
      (topic) => {
        state.boundTopics.set(name, topic);
        for (const batch of lookup.waiting) deliver(batch, state);
      },
      (thrown: unknown) => {
        state.boundTopics.delete(name);
        // The batch that asked is refused; those read meanwhile ask again, in order, as requests of their own
        // would (the fence keeps its producer's later entries out).
        const [asked, ...later] = lookup.waiting;
        asked!.refuseRest(thrown);
        for (const batch of later) deliver(batch, state);
      },
    );
}

/** Each entry's answer, for the response: its receipt, or its failure (counted). */
function outcomes(batch: TopicBatch, startedMs: number, metrics: WriterMetrics): Result[] {
  const results: Result[] = new Array<Result>(batch.size);
  let stored = 0;
  for (let index = 0; index < batch.size; index++) {
    const receipt = batch.receipts[index];
    if (receipt !== undefined) {
      results[index] = { receipt };
      stored++;
    } else {
      results[index] = failed(batch.messages[index], batch.failures[index], metrics);
    }
  }
  const nowMs = performance.now();
  const latencySeconds = (nowMs - startedMs) / 1000;
  for (let index = 0; index < stored; index++) metrics.publishLatency.observe(latencySeconds);
  if (metrics.trace !== undefined && stored > 0) {
    metrics.trace.record(TraceStage.STORED_TO_ANSWERED, nowMs - batch.times.storedMs);
    metrics.trace.record(TraceStage.READ_TO_ANSWERED, nowMs - startedMs);
  }
  return results;
}

function failed(message: PublishMessage | undefined, thrown: unknown, metrics: WriterMetrics): Result {
  const failure = failureMessage(message?.sequenceId ?? 0n, thrown);
  metrics.publishFailures.inc({ reason: failure.reason ?? '' });
  return { failure };
}
