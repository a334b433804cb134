import { defaultMaxListeners, setMaxListeners } from 'node:events';
import { KafkaErrorCode, SplicedBytes, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from '../gateway-context.js';
import { kafkaErrorOf } from '../kafka-errors.js';
import type { FetchResult } from '../ledgerline-backend.js';
import { entryRecordBatch } from '../record-mapping.js';
import { MAX_REMEMBERED_FETCH_ENDS, type Session } from '../session.js';

interface PartitionFetch {
  /** The Kafka topic name: as asked (v4-12), or the name of the topic with the id asked (v13+). */
  topicName: string;
  /** The topic's id as asked (v13+): the answer names the topic by it. */
  topicId: Buffer;
  /** The request's topic this partition is of: the answer keeps the request's topics. */
  topicIndex: number;
  partitionIndex: number;
  fetchOffset: bigint;
  maxBytes: number;
  /** Why the topic asked for has no name (an unknown id): its partitions are answered this, and not read. */
  lookupError?: number;
  /** The Ledgerline topic, once resolved. */
  topic?: string;
  result?: FetchResult;
  /** The answer's record batches, one per entry: spliced into the answer as they are, never copied together. */
  records?: SplicedBytes;
  errorCode: number;
}

interface FetchTopic {
  name: string;
  topicId: Buffer;
  partitions: { partitionIndex: number; fetchOffset: bigint; partitionMaxBytes: number }[];
}

/**
 * The Kafka name of each topic asked for, or the error its partitions are
 * answered: from v13 a topic is asked for by id, and an id no live topic has
 * is UNKNOWN_TOPIC_ID, as Kafka answers; a failure to look an id up is that
 * failure's error.
 */
async function topicNames(
  context: GatewayContext,
  topics: FetchTopic[],
  version: number,
  session: Session,
): Promise<(string | number)[]> {
  if (version < 13) return topics.map((topic) => topic.name);
  return Promise.all(
    topics.map(async (topic) => {
      try {
        return (await context.kafkaTopicById(topic.topicId, session.caller)) ?? KafkaErrorCode.UNKNOWN_TOPIC_ID;
      } catch (error) {
        return kafkaErrorOf(error);
      }
    }),
  );
}

async function flatten(context: GatewayContext, request: DecodedRequest, session: Session): Promise<PartitionFetch[]> {
  const topics = request.body['topics'] as FetchTopic[];
  const names = await topicNames(context, topics, request.header.apiVersion, session);
  return topics.flatMap((topic, topicIndex) => {
    const name = names[topicIndex]!;
    const lookupError = typeof name === 'number' ? name : undefined;
    return topic.partitions.map((partition) => ({
      topicName: typeof name === 'string' ? name : '',
      topicId: topic.topicId,
      topicIndex,
      partitionIndex: partition.partitionIndex,
      fetchOffset: partition.fetchOffset,
      maxBytes: partition.partitionMaxBytes,
      lookupError,
      errorCode: lookupError ?? KafkaErrorCode.NONE,
    }));
  });
}

async function fetchOne(
  context: GatewayContext,
  fetch: PartitionFetch,
  waitMs: number,
  session: Session,
  signal?: AbortSignal,
): Promise<void> {
  // A topic asked for by an id no topic has: nothing to read.
  if (fetch.lookupError !== undefined) return;
  try {
    // Nor once cut short (a gateway leaving): answered below as a cut-short read is.
    signal?.throwIfAborted();
    fetch.topic ??= await context.resolvePartition(fetch.topicName, fetch.partitionIndex, session.caller);
    const result = await context.backend.fetch(
      fetch.topic,
      {
        offset: fetch.fetchOffset,
        maxEntries: context.settings.kafkaMaxFetchEntries,
        maxBytes: Math.max(1, Math.min(fetch.maxBytes, context.settings.kafkaMaxFrameSizeBytes)),
        maxWaitMs: waitMs,
      },
      session.caller,
      signal,
    );
    fetch.result = result;
    fetch.errorCode = fetch.fetchOffset > result.nextOffset ? KafkaErrorCode.OFFSET_OUT_OF_RANGE : KafkaErrorCode.NONE;
  } catch (error) {
    // A long poll this request cut short once another partition had data, or the gateway left, is not a failure.
    if (signal?.aborted === true) return;
    fetch.errorCode = kafkaErrorOf(error);
  }
}

function bytesOf(fetch: PartitionFetch): number {
  return (
    fetch.result?.entries.reduce(
      (sum, entry) => sum + entry.messages.reduce((size, m) => size + m.payload.length, 0),
      0,
    ) ?? 0
  );
}

/**
 * The long poll: when the first, immediate read of every partition found
 * fewer than min_bytes, the empty partitions wait (the owner wakes them when
 * entries arrive) until one of them has data or max_wait_ms passes; the rest
 * are then cancelled.
 */
async function longPoll(
  context: GatewayContext,
  fetches: PartitionFetch[],
  waitMs: number,
  session: Session,
): Promise<void> {
  const waiting = fetches.filter(
    (fetch) => fetch.errorCode === KafkaErrorCode.NONE && (fetch.result?.entries.length ?? 0) === 0,
  );
  if (waiting.length === 0 || context.leavingSignal.aborted) return;
  const controller = new AbortController();
  const leaving = () => controller.abort();
  context.leavingSignal.addEventListener('abort', leaving, { once: true });
  // Each partition's call listens on the one signal: past Node's default of ten listeners it warns of a leak.
  setMaxListeners(Math.max(defaultMaxListeners, waiting.length), controller.signal);
  try {
    await Promise.all(
      waiting.map(async (fetch) => {
        await fetchOne(context, fetch, waitMs, session, controller.signal);
        if ((fetch.result?.entries.length ?? 0) > 0) controller.abort();
      }),
    );
  } finally {
    context.leavingSignal.removeEventListener('abort', leaving);
  }
}

/** A partition of a fetch answered by a gateway that is stopping: nothing read, sent to ask Metadata again. */
function leaveFetch(fetch: PartitionFetch): void {
  if (fetch.lookupError !== undefined) return;
  delete fetch.result;
  fetch.errorCode = KafkaErrorCode.NOT_LEADER_OR_FOLLOWER;
}

function endKey(fetch: PartitionFetch): string {
  return `${fetch.partitionIndex}:${fetch.topicName}`;
}

/** Whether the fetch is at or before the end this connection last saw of its partition. */
function tailing(session: Session, fetch: PartitionFetch): boolean {
  const end = session.fetchEnds.get(endKey(fetch));
  return end !== undefined && fetch.fetchOffset <= end;
}

function rememberEnd(session: Session, fetch: PartitionFetch): void {
  const key = endKey(fetch);
  session.fetchEnds.delete(key);
  if (fetch.result === undefined || fetch.errorCode !== KafkaErrorCode.NONE) return;
  session.fetchEnds.set(key, fetch.result.nextOffset);
  if (session.fetchEnds.size > MAX_REMEMBERED_FETCH_ENDS) {
    session.fetchEnds.delete(session.fetchEnds.keys().next().value as string);
  }
}

/** Record batches within the request's max_bytes; the first partition with data always gets one batch (KIP-74). */
function encodeWithin(fetches: PartitionFetch[], maxBytes: number): void {
  let total = 0;
  for (const fetch of fetches) {
    const batches: Buffer[] = [];
    for (const entry of fetch.result?.entries ?? []) {
      const batch = entryRecordBatch(entry);
      if (total > 0 && total + batch.length > maxBytes) break;
      batches.push(batch);
      total += batch.length;
    }
    fetch.records = new SplicedBytes(batches);
  }
}

const NO_RECORDS = Buffer.alloc(0);

function partitionResponse(fetch: PartitionFetch): Message {
  const next = fetch.result?.nextOffset ?? -1n;
  return {
    partitionIndex: fetch.partitionIndex,
    errorCode: fetch.errorCode,
    highWatermark: next,
    lastStableOffset: next,
    logStartOffset: -1n,
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: fetch.errorCode === KafkaErrorCode.NONE ? (fetch.records ?? NO_RECORDS) : NO_RECORDS,
  };
}

/** The answer's topics: the request's, in its order, each named as it was asked for (by name, or by id from v13). */
function topicResponses(fetches: PartitionFetch[]): Message[] {
  const responses: Message[] = [];
  let current: { index: number; response: Message } | undefined;
  for (const fetch of fetches) {
    if (current?.index !== fetch.topicIndex) {
      current = {
        index: fetch.topicIndex,
        response: { topic: fetch.topicName, topicId: fetch.topicId, partitions: [] },
      };
      responses.push(current.response);
    }
    (current.response['partitions'] as Message[]).push(partitionResponse(fetch));
  }
  return responses;
}

/**
 * Fetch v4-17: by offset from each partition's writer owner, honouring max_wait_ms, min_bytes and max_bytes;
 * from v13 the topics are named by id, both ways.
 */
export async function handleFetch(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const fetches = await flatten(context, request, session);
  const minBytes = request.body['minBytes'] as number;
  const maxBytes = request.body['maxBytes'] as number;
  const waitMs = Math.max(0, Math.min(request.body['maxWaitMs'] as number, context.settings.kafkaMaxFetchWaitMs));
  // A consumer tailing one partition: its owner answers at once when it has entries and otherwise waits for the
  // first one confirmed, so one call does what the read and the long poll below do in two (every tailing fetch
  // used to read, find nothing, and ask again to wait). Only at or before the end last seen: a fetch past the
  // end is OFFSET_OUT_OF_RANGE, answered at once, where the owner would wait. (An end remembered from before the
  // topic was deleted and made again can still make that one answer wait; the end is then forgotten.)
  const waitFirst = fetches.length === 1 && tailing(session, fetches[0]!) ? waitMs : 0;
  await Promise.all(fetches.map((fetch) => fetchOne(context, fetch, waitFirst, session, context.leavingSignal)));
  const found = fetches.reduce((sum, fetch) => sum + bytesOf(fetch), 0);
  if (waitFirst === 0 && found < Math.max(minBytes, 1) && waitMs > 0) await longPoll(context, fetches, waitMs, session);
  // Stopping (a wait here ends with it): Metadata now names another gateway the leader, and the client reads there.
  if (context.peers.leaving()) for (const fetch of fetches) leaveFetch(fetch);
  for (const fetch of fetches) rememberEnd(session, fetch);
  // An answer is at most kafkaMaxFetchResponseBytes: that bounds what a connection's answers can hold.
  const limit = Math.min(
    maxBytes > 0 ? maxBytes : Number.MAX_SAFE_INTEGER,
    context.settings.kafkaMaxFetchResponseBytes,
  );
  encodeWithin(fetches, limit);
  return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE, sessionId: 0, responses: topicResponses(fetches) };
}
