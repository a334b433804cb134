import { getEventListeners, getMaxListeners } from 'node:events';
import { create } from '@bufbuild/protobuf';
import {
  ApiKey,
  apiSpec,
  decodeRecordBatches,
  KafkaErrorCode,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';
import { EntrySchema, type Entry } from '@ledgerline/proto';
import { createLogger } from '@ledgerline/service-kit';
import { GatewayContext } from '../gateway-context.js';
import { GroupCoordinator } from '../group-coordinator.js';
import type { FetchResult, LedgerlineBackend } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession, type Session } from '../session.js';
import { resolveKafkaGatewaySettings } from '../settings.js';
import { TopicNames } from '../topic-names.js';
import { handleFetch } from './fetch.js';

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
  private readonly logs = new Map<string, Entry[]>();
  private readonly parked = new Set<() => void>();

  /** GetTopic as the gateway reads it: the partition count below, and an id. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions();
    return partitions === undefined ? undefined : { name: topic, partitions, topicId: Buffer.alloc(16, 1) };
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
  const settings = resolveKafkaGatewaySettings({});
  return new GatewayContext(
    settings,
    owners as unknown as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    () => ({ nodeId: 1, host: 'localhost', port: 9092 }),
    createLogger('fetch-spec', { level: 'silent' }),
  );
}

/**
 * A Fetch v11 of topic `orders` at `fetchOffset` of each partition given, waiting up to 20 s: the owners here have
 * no clock, so only an appended entry answers a long poll.
 */
function fetchRequest(partitions: number[], fetchOffset = 0n): DecodedRequest {
  const body = {
    replicaId: -1,
    maxWaitMs: 20_000,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        name: 'orders',
        partitions: partitions.map((partitionIndex) => ({
          partitionIndex,
          currentLeaderEpoch: -1,
          fetchOffset,
          logStartOffset: -1n,
          partitionMaxBytes: 1 << 20,
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
  return {
    header: { apiKey: ApiKey.Fetch, apiVersion: 11, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(ApiKey.Fetch)!,
    body,
  };
}

function values(answer: Message): string[][] {
  const [topic] = answer['responses'] as { partitions: { records: Buffer }[] }[];
  return topic!.partitions.map((partition) =>
    decodeRecordBatches(partition.records).flatMap((batch) => batch.records.map((r) => r.value!.toString())),
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
