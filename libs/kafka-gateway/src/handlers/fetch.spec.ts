import { getEventListeners, getMaxListeners } from 'node:events';
import { create } from '@bufbuild/protobuf';
import {
  ApiKey,
  apiSpec,
  decodeRecordBatches,
  KafkaErrorCode,
  SplicedBytes,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { EntrySchema, type Entry } from '@ledgerline/proto';
import { GatewayContext } from '../gateway-context.js';
import type { FetchResult } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession, type Session } from '../session.js';
import { handleFetch } from './fetch.js';
import { handleMetadata } from './metadata.js';
import { fetchRequest } from '../testing/fetch-requests.js';
import { specGatewayContext } from '../testing/spec-context.js';

interface FetchCall {
  topic: string;
  offset: bigint;
  maxWaitMs: number;
}

/**
 * The owners as the gateway's fetch sees them, in memory: each partition's
 * entries, and a long poll that is answered when an entry is appended (as
 * the writer owner's read waiters are woken by a confirmed entry), never by
 * a clock. Every call is recorded.
 */
class OwnersInMemory {
  readonly calls: FetchCall[] = [];
  /** The signals the calls were given, in order. */
  readonly signals: AbortSignal[] = [];
  partitionCount = 2;
  /** Each topic's id: 16 bytes of 1 unless set here (a topic deleted and created again gets another). */
  readonly ids = new Map<string, Buffer>();
  /** Topics that exist: every one unless listed here. */
  existing: Set<string> | undefined;
  readonly byIdCalls: string[] = [];
  private readonly logs = new Map<string, Entry[]>();
  private readonly parked = new Set<() => void>();

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    if (this.existing !== undefined && !this.existing.has(topic)) return undefined;
    const partitions = await this.partitions();
    return { name: topic, partitions, topicId: this.ids.get(topic) ?? Buffer.alloc(16, 1) };
  }

  /** GetTopicById: the topics of the namespace that have the id. */
  async topicById(namespace: string, topicId: Buffer) {
    this.byIdCalls.push(namespace);
    for (const topic of this.existing ?? []) {
      if (topic.startsWith(`persistent://${namespace}/`) && (await this.topic(topic))!.topicId.equals(topicId)) {
        return this.topic(topic);
      }
    }
    return undefined;
  }

  async partitions(): Promise<number> {
    return this.partitionCount;
  }

  append(topic: string, value: string): void {
    const log = this.logs.get(topic) ?? [];
    const offset = BigInt(log.length);
    log.push(
      create(EntrySchema, {
        firstOffset: offset,
        lastOffset: offset,
        brokerTimestampMs: 1_700_000_000_000n,
        numMessages: 1,
        messages: [{ offset, payload: Buffer.from(value), publishTimeMs: 1_700_000_000_000n }],
      }),
    );
    this.logs.set(topic, log);
    for (const wake of [...this.parked]) wake();
  }

  /** Long polls parked now, waiting for an entry. */
  get waiting(): number {
    return this.parked.size;
  }

  async fetch(
    topic: string,
    request: { offset: bigint; maxWaitMs: number },
    _caller: unknown,
    signal?: AbortSignal,
  ): Promise<FetchResult> {
    this.calls.push({ topic, offset: request.offset, maxWaitMs: request.maxWaitMs });
    if (signal !== undefined) this.signals.push(signal);
    if (this.read(topic, request.offset).length === 0 && request.maxWaitMs > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.parked.delete(wake);
          resolve();
        };
        this.parked.add(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
    return { entries: this.read(topic, request.offset), nextOffset: BigInt(this.logs.get(topic)?.length ?? 0) };
  }

  private read(topic: string, offset: bigint): Entry[] {
    return (this.logs.get(topic) ?? []).slice(Number(offset));
  }
}

const PARTITION_0 = 'persistent://public/default/orders-partition-0';
const PARTITION_1 = 'persistent://public/default/orders-partition-1';

function contextOver(owners: OwnersInMemory): GatewayContext {
  return specGatewayContext(owners, { name: 'fetch-spec' });
}

/** A partition's records as the client reads them: the answer's chunks, one after the other. */
function recordBytes(records: Buffer | SplicedBytes): Buffer {
  return records instanceof SplicedBytes ? Buffer.concat(records.chunks) : records;
}

function values(answer: Message): string[][] {
  const [topic] = answer['responses'] as { partitions: { records: Buffer | SplicedBytes }[] }[];
  return topic!.partitions.map((partition) =>
    decodeRecordBatches(recordBytes(partition.records)).flatMap((batch) =>
      batch.records.map((r) => r.value!.toString()),
    ),
  );
}

/** Resolves once `condition` holds, checking after each turn of the event loop; bounded by the spec's timeout. */
async function eventually(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

describe('Fetch long poll', () => {
  // A connection each: what one remembers of the partitions it fetched must not leak into the next spec.
  let session: Session;
  beforeEach(() => {
    session = newSession(ANONYMOUS, '127.0.0.1');
  });

  it('answers a one-partition fetch that has entries in one call to the owner, without waiting', async () => {
    const owners = new OwnersInMemory();
    owners.append(PARTITION_0, 'ready');
    const answer = await handleFetch(contextOver(owners), fetchRequest([0]), session);
    expect(values(answer)).toEqual([['ready']]);
    expect(owners.calls).toHaveLength(1);
  });

  it('answers each entry as a record batch of its own, handed to the encoder as it is (SplicedBytes), not copied together', async () => {
    const owners = new OwnersInMemory();
    for (const value of ['one', 'two', 'three']) owners.append(PARTITION_0, value);
    const answer = await handleFetch(contextOver(owners), fetchRequest([0]), session);
    const [topic] = answer['responses'] as { partitions: { records: unknown }[] }[];
    const records = topic!.partitions[0]!.records;
    expect(records).toBeInstanceOf(SplicedBytes);
    const chunks = (records as SplicedBytes).chunks;
    expect(chunks.map((chunk) => decodeRecordBatches(chunk).map((batch) => batch.baseOffset))).toEqual([
      [0n],
      [1n],
      [2n],
    ]);
    expect(values(answer)).toEqual([['one', 'two', 'three']]);
  });

  it('answers a tailing one-partition fetch when an entry is appended, in one call to the owner', async () => {
    const owners = new OwnersInMemory();
    const context = contextOver(owners);
    owners.append(PARTITION_0, 'first');
    expect(values(await handleFetch(context, fetchRequest([0]), session))).toEqual([['first']]);
    // At the end the last answer gave: the first call already waits, with no read that finds nothing before it.
    const fetching = handleFetch(context, fetchRequest([0], 1n), session);
    await eventually(() => owners.waiting === 1);
    expect(owners.calls.slice(1)).toEqual([{ topic: PARTITION_0, offset: 1n, maxWaitMs: 20_000 }]);
    owners.append(PARTITION_0, 'arrived');
    expect(values(await fetching)).toEqual([['arrived']]);
    expect(owners.calls).toHaveLength(2);
  });

  it('answers a fetch past the end at once with OFFSET_OUT_OF_RANGE, where the owner would wait', async () => {
    const owners = new OwnersInMemory();
    const context = contextOver(owners);
    owners.append(PARTITION_0, 'only');
    await handleFetch(context, fetchRequest([0]), session);
    const answer = await handleFetch(context, fetchRequest([0], 5n), session);
    const [topic] = answer['responses'] as { partitions: { errorCode: number }[] }[];
    expect(topic!.partitions.map((partition) => partition.errorCode)).toEqual([KafkaErrorCode.OFFSET_OUT_OF_RANGE]);
    expect(owners.calls.slice(1)).toEqual([{ topic: PARTITION_0, offset: 5n, maxWaitMs: 0 }]);
  });

  it('reads at once, then waits, for a partition this connection has not fetched before', async () => {
    const owners = new OwnersInMemory();
    const fetching = handleFetch(contextOver(owners), fetchRequest([0]), session);
    await eventually(() => owners.waiting === 1);
    expect(owners.calls.map((call) => call.maxWaitMs)).toEqual([0, 20_000]);
    owners.append(PARTITION_0, 'arrived');
    expect(values(await fetching)).toEqual([['arrived']]);
  });

  it('answers a waiting fetch of several partitions when any one gets an entry, and stops the other waits', async () => {
    const owners = new OwnersInMemory();
    const fetching = handleFetch(contextOver(owners), fetchRequest([0, 1]), session);
    await eventually(() => owners.waiting === 2);
    owners.append(PARTITION_1, 'second');
    expect(values(await fetching)).toEqual([[], ['second']]);
    expect(owners.waiting).toBe(0);
  });

  it("waits on many partitions at once within the signal's listener limit (no warning of a leak)", async () => {
    const owners = new OwnersInMemory();
    owners.partitionCount = 16;
    const partitions = Array.from({ length: 16 }, (_, index) => index);
    const fetching = handleFetch(contextOver(owners), fetchRequest(partitions), session);
    await eventually(() => owners.waiting === 16);
    // Past its limit Node warns of a leaked listener (MaxListenersExceededWarning), as the standalone logged.
    const signal = owners.signals.at(-1)!;
    expect(getEventListeners(signal, 'abort').length).toBe(16);
    expect(getMaxListeners(signal)).toBeGreaterThanOrEqual(16);
    owners.append('persistent://public/default/orders-partition-5', 'fifth');
    expect(values(await fetching)[5]).toEqual(['fifth']);
  });
});

const ORDERS = 'persistent://public/default/orders';
const ELSEWHERE = 'persistent://public/other/orders';
const ORDERS_ID = Buffer.alloc(16, 1);
const ELSEWHERE_ID = Buffer.alloc(16, 2);
const UNKNOWN_ID = Buffer.alloc(16, 9);

/** A Fetch v13 (or later) of partition 0 of each topic id, at offset 0, without waiting. */
function fetchByIds(topicIds: Buffer[], version = 13): DecodedRequest {
  const request = fetchRequest([0]);
  const [topic] = request.body['topics'] as Message[];
  const topics = topicIds.map((topicId) => ({ ...topic, name: '', topicId }));
  return {
    ...request,
    header: { ...request.header, apiVersion: version },
    body: { ...request.body, maxWaitMs: 0, topics },
  };
}

function metadataRequest(name: string): DecodedRequest {
  return {
    header: { apiKey: ApiKey.Metadata, apiVersion: 12, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(ApiKey.Metadata)!,
    body: { topics: [{ topicId: Buffer.alloc(16), name }], allowAutoTopicCreation: false },
  };
}

interface TopicAnswer {
  topic: string;
  topicId: Buffer;
  partitions: { errorCode: number; records: Buffer | SplicedBytes }[];
}

describe('Fetch by topic id (v13+)', () => {
  let owners: OwnersInMemory;
  let context: GatewayContext;
  const session = newSession(ANONYMOUS, '127.0.0.1');
  beforeEach(() => {
    owners = new OwnersInMemory();
    owners.existing = new Set([ORDERS, ELSEWHERE]);
    owners.ids.set(ELSEWHERE, ELSEWHERE_ID);
    owners.append(`${ORDERS}-partition-0`, 'home');
    owners.append(`${ELSEWHERE}-partition-0`, 'elsewhere');
    context = contextOver(owners);
  });

  it.each([13, 16, 17])(
    'v%d: reads the topic of an id of the Kafka namespace, found as Metadata v12 finds one, and answers by id',
    async (version) => {
      const answer = await handleFetch(context, fetchByIds([ORDERS_ID], version), session);
      const [topic] = answer['responses'] as TopicAnswer[];
      expect(topic!.topicId).toEqual(ORDERS_ID);
      expect(values(answer)).toEqual([['home']]);
      expect(owners.byIdCalls).toEqual(['public/default']);
    },
  );

  it('reads the topic an id was answered for by Metadata, of any namespace, without looking the id up again', async () => {
    await handleMetadata(context, metadataRequest('public/other/orders'), session);
    const answer = await handleFetch(context, fetchByIds([ELSEWHERE_ID]), session);
    expect(values(answer)).toEqual([['elsewhere']]);
    expect(owners.byIdCalls).toEqual([]);
  });

  it('answers UNKNOWN_TOPIC_ID, with the id, for an id no topic has, and reads the other topics asked for', async () => {
    const answer = await handleFetch(context, fetchByIds([UNKNOWN_ID, ORDERS_ID]), session);
    const [unknown, known] = answer['responses'] as TopicAnswer[];
    expect(unknown!.topicId).toEqual(UNKNOWN_ID);
    expect(unknown!.partitions.map((partition) => partition.errorCode)).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_ID]);
    expect(known!.partitions.map((partition) => partition.errorCode)).toEqual([KafkaErrorCode.NONE]);
    // Only the known topic's partition reached an owner.
    expect(owners.calls.map((call) => call.topic)).toEqual([`${ORDERS}-partition-0`]);
  });

  it('answers UNKNOWN_TOPIC_ID for the old id of a topic deleted and created again', async () => {
    await handleMetadata(context, metadataRequest('public/other/orders'), session);
    owners.ids.set(ELSEWHERE, Buffer.alloc(16, 3));
    context.forgetTopic(ELSEWHERE);
    const answer = await handleFetch(context, fetchByIds([ELSEWHERE_ID]), session);
    const [topic] = answer['responses'] as TopicAnswer[];
    expect(topic!.partitions.map((partition) => partition.errorCode)).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_ID]);
  });

  it('keeps reading by name before v13, whatever the id field holds', async () => {
    const request = fetchByIds([UNKNOWN_ID], 12);
    const [topic] = request.body['topics'] as Message[];
    topic!['name'] = 'orders';
    expect(values(await handleFetch(context, request, session))).toEqual([['home']]);
  });
});
