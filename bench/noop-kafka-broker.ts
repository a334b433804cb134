// A Kafka broker that stores nothing, for the produce bench's floor rows: it
// speaks the protocol (framing, request decoding and response encoding by
// @ledgerline/kafka-protocol, as the gateway does) and answers ApiVersions,
// Metadata (every topic asked for: one partition, led by itself) and Produce
// (every partition stored at once, offsets counted per partition) without
// decoding a record batch or keeping a byte. What a Kafka client reaches
// against it is what the client itself can do on this machine, the ceiling
// of any broker's row measured with that client.
import { createServer, type Server, type Socket } from 'node:net';
import {
  ApiKey,
  FrameDecoder,
  KafkaErrorCode,
  RECORD_BATCH_OVERHEAD_BYTES,
  decodeRequest,
  encodeResponse,
  supportedApiVersions,
  type DecodedRequest,
  type Message,
} from '@ledgerline/kafka-protocol';

const NODE_ID = 1;
const OPERATIONS_UNKNOWN = -2147483648;
const SERVED = new Set<number>([ApiKey.ApiVersions, ApiKey.Metadata, ApiKey.Produce]);

export interface NoopKafkaBroker {
  readonly address: string;
  /** Records the Produce requests carried so far, counted from each batch's header (records count at bytes 57-60). */
  readonly recordsStored: () => number;
  close(): Promise<void>;
}

/** Starts the broker on a free loopback port. */
export async function startNoopKafkaBroker(): Promise<NoopKafkaBroker> {
  const nextOffsets = new Map<string, bigint>();
  let records = 0;
  const sockets = new Set<Socket>();
  const answer = (request: DecodedRequest, port: number): Message | undefined => {
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
        const baseOffset = nextOffsets.get(key) ?? 0n;
        const count = recordCount(partition.records);
        records += count;
        nextOffsets.set(key, baseOffset + BigInt(count));
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
    socket.on('data', (chunk) => {
      for (const frame of frames.push(chunk)) {
        const request = decodeRequest(frame);
        const body = answer(request, port);
        if (body === undefined) {
          if (!SERVED.has(request.spec.key)) socket.destroy();
          continue;
        }
        socket.write(encodeResponse(request.spec, request.header.apiVersion, request.header.correlationId, body));
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

/** Records in a partition's record batches, from each batch header's count (v2 batches: offset 57). */
function recordCount(records: Buffer | null): number {
  if (records === null) return 0;
  let count = 0;
  for (let at = 0; at + RECORD_BATCH_OVERHEAD_BYTES <= records.length;) {
    const batchLength = records.readInt32BE(at + 8);
    count += records.readInt32BE(at + 57);
    at += 12 + batchLength;
  }
  return count;
}
