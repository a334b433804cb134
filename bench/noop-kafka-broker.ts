// A Kafka broker that stores nothing, for the produce and fetch benches' ceiling
// rows: it speaks the protocol (framing, request decoding and response encoding
// by @ledgerline/kafka-protocol, as the gateway does) and answers ApiVersions,
// Metadata (every topic asked for: one partition, led by itself) and Produce
// (every partition stored at once, offsets counted per partition) without
// decoding a record batch or keeping a byte. Given a log (`noopLog`: record
// batches encoded once, before the row), it also answers ListOffsets and Fetch
// of partition 0 of any topic from it, as a Kafka broker answers a fetch: at
// once with the batches from the offset asked for within the partition's
// max_bytes (the first always), and at the log's end only after max_wait_ms,
// since nothing will arrive. What a Kafka client reaches against it is what
// the client itself can do on this machine, the ceiling of any broker's row
// measured with that client.
import { createServer, type Server, type Socket } from 'node:net';
import {
  ApiKey,
  FrameDecoder,
  KafkaErrorCode,
  RECORD_BATCH_OVERHEAD_BYTES,
  decodeRequest,
  encodePlainRecordBatch,
  encodeResponse,
  supportedApiVersions,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';

const NODE_ID = 1;
const OPERATIONS_UNKNOWN = -2147483648;
const SERVED = new Set<number>([ApiKey.ApiVersions, ApiKey.Metadata, ApiKey.Produce]);
/** Served too when the broker holds a log: a consumer's requests, a group of one member included. */
const SERVED_WITH_LOG = new Set<number>([
  ...SERVED,
  ApiKey.ListOffsets,
  ApiKey.Fetch,
  ApiKey.FindCoordinator,
  ApiKey.JoinGroup,
  ApiKey.SyncGroup,
  ApiKey.Heartbeat,
  ApiKey.LeaveGroup,
  ApiKey.OffsetFetch,
  ApiKey.OffsetCommit,
]);
/** The one member of every group: the broker answers as the coordinator of a group nobody else joins. */
const MEMBER_ID = 'noop-member';
/** ListOffsets' timestamp for the log's start. */
const EARLIEST = -2n;

/**
 * Record batches a Fetch answers from, each with its base offset: encoded
 * once before a row, or appended as a producer's Produce requests carry them
 * (a log that keeps what is produced), waking the fetches waiting at its end.
 */
export class NoopLog {
  readonly batches: { baseOffset: bigint; bytes: Buffer }[] = [];
  /** The log end offset (high watermark). */
  endOffset = 0n;
  private readonly waiting = new Set<() => void>();

  /** Appends a Produce request's record batches, each given its offset; the first one's. */
  append(records: Buffer | null): bigint {
    const first = this.endOffset;
    for (const batch of splitBatches(records)) {
      // The base offset is outside the batch's CRC (it covers from the attributes on), as a broker rewrites it.
      const bytes = Buffer.from(batch);
      bytes.writeBigInt64BE(this.endOffset, 0);
      this.batches.push({ baseOffset: this.endOffset, bytes });
      this.endOffset += BigInt(bytes.readInt32BE(57));
    }
    for (const wake of this.waiting) wake();
    this.waiting.clear();
    return first;
  }

  /** Resolves once the log holds more than `offset`, or after `maxWaitMs`. */
  async waitPast(offset: bigint, maxWaitMs: number): Promise<void> {
    if (this.endOffset > offset) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiting.add(resolve);
      timer = setTimeout(() => {
        this.waiting.delete(resolve);
        resolve();
      }, maxWaitMs);
    });
    clearTimeout(timer);
  }
}

/** `messages` records of `value`, `batch` to a record batch (uncompressed RecordBatch v2, as the gateway answers). */
export function noopLog(messages: number, value: Buffer, batch: number): NoopLog {
  const log = new NoopLog();
  const now = BigInt(Date.now());
  for (let first = 0; first < messages; first += batch) {
    const count = Math.min(batch, messages - first);
    log.append(encodePlainRecordBatch(BigInt(first), Array(count).fill(value) as Buffer[], now));
  }
  return log;
}

export interface NoopKafkaBroker {
  readonly address: string;
  /** Records the Produce requests carried so far, counted from each batch's header (records count at bytes 57-60). */
  readonly recordsStored: () => number;
  close(): Promise<void>;
}

/**
 * Starts the broker on a free loopback port; with a log, it serves consumers
 * from it too, and with `keepProduced` appends what is produced to it (any
 * topic's partition 0), so a consumer tails a producer through it.
 */
export async function startNoopKafkaBroker(log?: NoopLog, keepProduced = false): Promise<NoopKafkaBroker> {
  const served = log === undefined ? SERVED : SERVED_WITH_LOG;
  const nextOffsets = new Map<string, bigint>();
  let records = 0;
  const sockets = new Set<Socket>();
  const answer = (request: DecodedRequest, port: number): Message | Promise<Message> | undefined => {
    switch (request.spec.key) {
      case ApiKey.ApiVersions:
        return {
          errorCode: KafkaErrorCode.NONE,
          // The gateway's whole table, though only a producer's requests are answered: librdkafka picks its
          // record format from the table (without Fetch v4+ it falls back to the old MessageSet v1).
          apiKeys: supportedApiVersions(),
          throttleTimeMs: 0,
        };
      case ApiKey.Metadata:
        return metadata(request, port);
      case ApiKey.Produce:
        return produce(request);
      case ApiKey.ListOffsets:
        return log === undefined ? undefined : listOffsets(request, log);
      case ApiKey.Fetch:
        return log === undefined ? undefined : fetch(request, log);
      default:
        return log === undefined ? undefined : groupAnswer(request, port);
    }
  };
  // An idle group's first member: JoinGroup and SyncGroup at once, commits answered and kept nowhere.
  const groupAnswer = (request: DecodedRequest, port: number): Message | undefined => {
    const body = request.body;
    switch (request.spec.key) {
      case ApiKey.FindCoordinator:
        return {
          throttleTimeMs: 0,
          errorCode: KafkaErrorCode.NONE,
          errorMessage: null,
          nodeId: NODE_ID,
          host: '127.0.0.1',
          port,
        };
      case ApiKey.JoinGroup: {
        const [protocol] = body['protocols'] as { name: string; metadata: Buffer }[];
        return {
          throttleTimeMs: 0,
          errorCode: KafkaErrorCode.NONE,
          generationId: 1,
          protocolType: body['protocolType'],
          protocolName: protocol?.name ?? null,
          leader: MEMBER_ID,
          memberId: MEMBER_ID,
          members: [{ memberId: MEMBER_ID, groupInstanceId: null, metadata: protocol?.metadata ?? Buffer.alloc(0) }],
        };
      }
      case ApiKey.SyncGroup: {
        const assignments = body['assignments'] as { memberId: string; assignment: Buffer }[];
        const mine = assignments.find((assignment) => assignment.memberId === MEMBER_ID);
        return {
          throttleTimeMs: 0,
          errorCode: KafkaErrorCode.NONE,
          protocolType: body['protocolType'],
          protocolName: body['protocolName'],
          assignment: mine?.assignment ?? Buffer.alloc(0),
        };
      }
      case ApiKey.Heartbeat:
        return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE };
      case ApiKey.LeaveGroup:
        return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE, members: [] };
      case ApiKey.OffsetFetch:
        return offsetFetch(request);
      case ApiKey.OffsetCommit:
        return offsetCommit(request);
      default:
        return undefined;
    }
  };
  const produce = (request: DecodedRequest): Message | undefined => {
    const topics = request.body['topics'] as {
      name: string;
      partitions: { partitionIndex: number; records: Buffer | null }[];
    }[];
    const responses = topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => {
        const key = `${topic.name}/${partition.partitionIndex}`;
        const count = recordCount(partition.records);
        records += count;
        const kept = keepProduced && log !== undefined && partition.partitionIndex === 0;
        const baseOffset = kept ? log.append(partition.records) : (nextOffsets.get(key) ?? 0n);
        if (!kept) nextOffsets.set(key, baseOffset + BigInt(count));
        return {
          partitionIndex: partition.partitionIndex,
          errorCode: KafkaErrorCode.NONE,
          baseOffset,
          logAppendTimeMs: -1n,
          logStartOffset: 0n,
          recordErrors: [],
          errorMessage: null,
        };
      }),
    }));
    return request.body['acks'] === 0 ? undefined : { responses, throttleTimeMs: 0 };
  };
  let port = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    const frames = new FrameDecoder();
    // Answers go out in the order the requests came, as clients require; only a Fetch at the log's end waits.
    let answered: Promise<void> = Promise.resolve();
    socket.on('data', (chunk) => {
      for (const frame of frames.push(chunk)) {
        const request = decodeRequest(frame);
        const body = answer(request, port);
        if (body === undefined) {
          if (!served.has(request.spec.key)) socket.destroy();
          continue;
        }
        const { spec, header } = request;
        answered = answered.then(async () => {
          const message = await body;
          if (!socket.destroyed) socket.write(encodeResponse(spec, header.apiVersion, header.correlationId, message));
        });
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    recordsStored: () => records,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** No group has committed anything: every partition asked for answers offset -1. */
function offsetFetch(request: DecodedRequest): Message {
  const topics = (request.body['topics'] as { name: string; partitionIndexes: number[] }[] | null) ?? [];
  return {
    throttleTimeMs: 0,
    topics: topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitionIndexes.map((partitionIndex) => ({
        partitionIndex,
        committedOffset: -1n,
        committedLeaderEpoch: -1,
        metadata: null,
        errorCode: KafkaErrorCode.NONE,
      })),
    })),
    errorCode: KafkaErrorCode.NONE,
  };
}

/** Every commit answered as stored, none kept: what a consumer's commits cost it beside the round trip. */
function offsetCommit(request: DecodedRequest): Message {
  const topics = request.body['topics'] as { name: string; partitions: { partitionIndex: number }[] }[];
  return {
    throttleTimeMs: 0,
    topics: topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => ({
        partitionIndex: partition.partitionIndex,
        errorCode: KafkaErrorCode.NONE,
      })),
    })),
  };
}

/** ListOffsets of any topic's partitions: the log's start for earliest, its end for anything else. */
function listOffsets(request: DecodedRequest, log: NoopLog): Message {
  const topics = request.body['topics'] as {
    name: string;
    partitions: { partitionIndex: number; timestamp: bigint }[];
  }[];
  return {
    throttleTimeMs: 0,
    topics: topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => {
        const offset = partition.timestamp === EARLIEST ? 0n : log.endOffset;
        return {
          partitionIndex: partition.partitionIndex,
          errorCode: KafkaErrorCode.NONE,
          oldStyleOffsets: [offset],
          timestamp: -1n,
          offset,
          leaderEpoch: 0,
        };
      }),
    })),
  };
}

type FetchPartition = { partitionIndex: number; fetchOffset: bigint; partitionMaxBytes: number };

/** The log's batches from the one holding `offset`, within `maxBytes` (the first always, as KIP-74 says). */
function batchesFrom(log: NoopLog, offset: bigint, maxBytes: number): Buffer {
  const taken: Buffer[] = [];
  let bytes = 0;
  for (let index = 0; index < log.batches.length; index++) {
    const next = log.batches[index + 1]?.baseOffset ?? log.endOffset;
    if (next <= offset) continue;
    const batch = log.batches[index]!.bytes;
    if (taken.length > 0 && bytes + batch.length > maxBytes) break;
    taken.push(batch);
    bytes += batch.length;
  }
  return Buffer.concat(taken);
}

/**
 * Fetch v4+ from the log: every partition at or past the log's end is empty, and a request with nothing to
 * answer waits until the log grows past the offset asked for, at most max_wait_ms, as a Kafka broker's does.
 */
async function fetch(request: DecodedRequest, log: NoopLog): Promise<Message> {
  const answer = fetchNow(request, log);
  if (answer.waitPast === undefined) return answer.message;
  await log.waitPast(answer.waitPast, request.body['maxWaitMs'] as number);
  return fetchNow(request, log).message;
}

function fetchNow(request: DecodedRequest, log: NoopLog): { message: Message; waitPast?: bigint } {
  const topics = request.body['topics'] as { name: string; topicId: Buffer; partitions: FetchPartition[] }[];
  let found = 0;
  let failed = false;
  const responses = topics.map((topic) => ({
    topic: topic.name,
    topicId: topic.topicId,
    partitions: topic.partitions.map((partition) => {
      const outOfRange = partition.fetchOffset > log.endOffset || partition.partitionIndex !== 0;
      const records = outOfRange
        ? Buffer.alloc(0)
        : batchesFrom(log, partition.fetchOffset, partition.partitionMaxBytes);
      found += records.length;
      failed ||= outOfRange;
      return {
        partitionIndex: partition.partitionIndex,
        errorCode: outOfRange ? KafkaErrorCode.OFFSET_OUT_OF_RANGE : KafkaErrorCode.NONE,
        highWatermark: log.endOffset,
        lastStableOffset: log.endOffset,
        logStartOffset: 0n,
        abortedTransactions: null,
        preferredReadReplica: -1,
        records,
      };
    }),
  }));
  const message = { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE, sessionId: 0, responses };
  if (found > 0 || failed) return { message };
  const asked = topics.flatMap((topic) => topic.partitions.map((partition) => partition.fetchOffset));
  return { message, waitPast: asked.length === 0 ? log.endOffset : asked.reduce((a, b) => (a < b ? a : b)) };
}

/** A Metadata answer naming this broker as the leader of partition 0 of every topic asked for. */
function metadata(request: DecodedRequest, port: number): Message {
  const asked = (request.body['topics'] as { name: string | null }[] | null) ?? [];
  return {
    throttleTimeMs: 0,
    brokers: [{ nodeId: NODE_ID, host: '127.0.0.1', port, rack: null }],
    clusterId: 'noop',
    controllerId: NODE_ID,
    topics: asked.map((topic) => ({
      errorCode: KafkaErrorCode.NONE,
      name: topic.name,
      topicId: Buffer.alloc(16),
      isInternal: false,
      partitions: [
        {
          errorCode: KafkaErrorCode.NONE,
          partitionIndex: 0,
          leaderId: NODE_ID,
          leaderEpoch: 0,
          replicaNodes: [NODE_ID],
          isrNodes: [NODE_ID],
          offlineReplicas: [],
        },
      ],
      topicAuthorizedOperations: OPERATIONS_UNKNOWN,
    })),
    clusterAuthorizedOperations: OPERATIONS_UNKNOWN,
  };
}

/** A partition's record batches, each a view of `records` (v2 batches: the length at offset 8). */
function splitBatches(records: Buffer | null): Buffer[] {
  const batches: Buffer[] = [];
  if (records === null) return batches;
  for (let at = 0; at + RECORD_BATCH_OVERHEAD_BYTES <= records.length;) {
    const end = at + 12 + records.readInt32BE(at + 8);
    batches.push(records.subarray(at, end));
    at = end;
  }
  return batches;
}

/** Records in a partition's record batches, from each batch header's count (v2 batches: offset 57). */
function recordCount(records: Buffer | null): number {
  return splitBatches(records).reduce((count, batch) => count + batch.readInt32BE(57), 0);
}
