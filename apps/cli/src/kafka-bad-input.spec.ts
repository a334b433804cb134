import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';
import type { RunningKafkaGateway } from '@ledgerline/kafka-gateway';
import { recordBatchOf } from '@ledgerline/kafka-gateway/testing';
import {
  ApiKey,
  apiSpec,
  Compression,
  decodeRecordBatches,
  decodeResponse,
  encodeRecordBatch,
  encodeRequest,
  KafkaErrorCode,
  type ApiSpec,
  type Message,
} from '@ledgerline/kafka-protocol';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

// Bad input from Kafka clients, over raw sockets: the gateway answers with the
// right error or closes that one connection, never crashes, and never holds
// more than its bounds for a client that stops reading.

const WAIT_MS = 5_000;
const MAX_OUTPUT_BYTES = 64 * 1024;
const MAX_FETCH_BYTES = 64 * 1024;
const IN_FLIGHT = 4;

/** A bare Kafka connection: frames out, frames in, and whether the gateway closed it. */
class RawConnection {
  private readonly socket: Socket;
  private pending = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private read = 0;
  private waiter: (() => void) | undefined;
  closed = false;
  readonly opened: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.opened = new Promise((resolve) => this.socket.once('connect', () => resolve()));
    this.socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readInt32BE(0)) {
        const size = this.pending.readInt32BE(0);
        this.frames.push(this.pending.subarray(4, 4 + size));
        this.pending = this.pending.subarray(4 + size);
      }
      this.waiter?.();
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  send(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** The next answer, or undefined once the gateway closed the connection; bounded by WAIT_MS. */
  async next(): Promise<Buffer | undefined> {
    const deadline = Date.now() + WAIT_MS;
    while (this.frames.length === this.read && !this.closed) {
      if (Date.now() > deadline) throw new Error('no answer and no close');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 50);
      });
    }
    if (this.read === this.frames.length) return undefined;
    const frame = this.frames[this.read];
    this.frames[this.read++] = Buffer.alloc(0);
    return frame;
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  end(): void {
    this.socket.destroy();
  }
}

function spec(key: number): ApiSpec {
  return apiSpec(key)!;
}

function request(key: number, version: number, body: Message, correlationId = 1): Buffer {
  return encodeRequest(spec(key), { apiKey: key, apiVersion: version, correlationId, clientId: 'raw' }, body);
}

function produceRequest(topic: string, records: Buffer): Buffer {
  return request(ApiKey.Produce, 7, {
    transactionalId: null,
    acks: -1,
    timeoutMs: 1000,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, records }] }],
  });
}

function batch(compression: number = Compression.NONE, producer = { producerId: -1n, baseSequence: -1 }): Buffer {
  return recordBatchOf([`c${compression}`], producer.producerId < 0n ? undefined : producer);
}

describe('the Kafka gateway under bad input', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let gateway: RunningKafkaGateway;
  const opened: RawConnection[] = [];

  async function open(): Promise<RawConnection> {
    const connection = new RawConnection(gateway.port);
    opened.push(connection);
    await connection.opened;
    return connection;
  }

  async function stillServes(): Promise<void> {
    const connection = await open();
    connection.send(request(ApiKey.ApiVersions, 2, {}, 77));
    const answer = decodeResponse(spec(ApiKey.ApiVersions), 2, (await connection.next())!);
    expect([answer.correlationId, answer.body['errorCode']]).toEqual([77, 0]);
  }

  async function producePartitionError(records: Buffer): Promise<number> {
    const connection = await open();
    connection.send(produceRequest('bad-input', records));
    const answer = decodeResponse(spec(ApiKey.Produce), 7, (await connection.next())!);
    const [topic] = answer.body['responses'] as { partitions: { errorCode: number }[] }[];
    return topic!.partitions[0]!.errorCode;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-bad-'));
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--kafka-max-frame-size-bytes',
      String(1024 * 1024),
      '--kafka-max-output-buffer-bytes',
      String(MAX_OUTPUT_BYTES),
      '--kafka-max-in-flight-requests',
      String(IN_FLIGHT),
      '--kafka-max-fetch-response-bytes',
      String(MAX_FETCH_BYTES),
    ]);
    gateway = standalone.kafka!;
  });
  afterAll(async () => {
    for (const connection of opened) connection.end();
    await standalone.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes a connection that sends a garbage frame and goes on serving others', async () => {
    const connection = await open();
    const garbage = Buffer.from([0, 0, 0, 12, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6]);
    connection.send(garbage);
    expect(await connection.next()).toBeUndefined();
    expect(connection.closed).toBe(true);
    await stillServes();
  });

  it('closes a connection whose frame is above maxFrameSizeBytes, or negative, without waiting for its body', async () => {
    for (const size of [1024 * 1024 + 1, 0x7fffffff, -5, 3]) {
      const connection = await open();
      const head = Buffer.alloc(4);
      head.writeInt32BE(size);
      connection.send(head);
      expect(await connection.next()).toBeUndefined();
    }
    await stillServes();
  });

  it('closes a connection that sends an unknown API key, as a Kafka broker does', async () => {
    const connection = await open();
    connection.send(Buffer.from([0, 0, 0, 10, 0, 99, 0, 0, 0, 0, 0, 5, 0xff, 0xff]));
    expect(await connection.next()).toBeUndefined();
  });

  it('answers ApiVersions in a version it does not serve in v0, with UNSUPPORTED_VERSION and its table', async () => {
    const connection = await open();
    connection.send(Buffer.from([0, 0, 0, 10, 0, 18, 0, 9, 0, 0, 0, 42, 0xff, 0xff]));
    const answer = decodeResponse(spec(ApiKey.ApiVersions), 0, (await connection.next())!);
    expect(answer.correlationId).toBe(42);
    expect(answer.body['errorCode']).toBe(KafkaErrorCode.UNSUPPORTED_VERSION);
    expect(answer.body['apiKeys']).toContainEqual({ apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 3 });
    // The client retries in a version the table names, on the same connection.
    connection.send(request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }, 43));
    expect(decodeResponse(spec(ApiKey.ApiVersions), 3, (await connection.next())!).body['errorCode']).toBe(0);
  });

  it('answers a truncated batch, a bad CRC and records mislabelled snappy with CORRUPT_MESSAGE, an undefined compression type with UNSUPPORTED_COMPRESSION_TYPE, and stores none', async () => {
    const good = batch();
    expect(await producePartitionError(good)).toBe(KafkaErrorCode.NONE);
    expect(await producePartitionError(good.subarray(0, good.length - 3))).toBe(KafkaErrorCode.CORRUPT_MESSAGE);
    const flipped = Buffer.from(good);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    expect(await producePartitionError(flipped)).toBe(KafkaErrorCode.CORRUPT_MESSAGE);
    // Records labelled snappy that are not snappy data: snappy is served, so they are corrupt.
    const snappy = Buffer.from(good);
    snappy.writeInt16BE(Compression.SNAPPY, 21);
    snappy.writeUInt32BE(crc32c(snappy.subarray(21)), 17);
    expect(await producePartitionError(snappy)).toBe(KafkaErrorCode.CORRUPT_MESSAGE);
    // A compression type Kafka does not define (5) is refused as unsupported.
    const unknown = Buffer.from(good);
    unknown.writeInt16BE(5, 21);
    unknown.writeUInt32BE(crc32c(unknown.subarray(21)), 17);
    expect(await producePartitionError(unknown)).toBe(KafkaErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    const connection = await open();
    connection.send(
      request(ApiKey.ListOffsets, 2, {
        replicaId: -1,
        isolationLevel: 0,
        topics: [{ name: 'bad-input', partitions: [{ partitionIndex: 0, timestamp: -1n }] }],
      }),
    );
    const answer = decodeResponse(spec(ApiKey.ListOffsets), 2, (await connection.next())!);
    expect((answer.body['topics'] as { partitions: { offset: bigint }[] }[])[0]!.partitions[0]!.offset).toBe(1n);
  });

  it("stores an idempotent producer's resent batch once and answers the resend as stored", async () => {
    const producer = { producerId: 123_456n, baseSequence: 0 };
    const offsetOf = async (): Promise<[number, bigint]> => {
      const connection = await open();
      connection.send(produceRequest('idempotent', batch(Compression.NONE, producer)));
      const answer = decodeResponse(spec(ApiKey.Produce), 7, (await connection.next())!);
      const partition = (answer.body['responses'] as { partitions: { errorCode: number; baseOffset: bigint }[] }[])[0]!
        .partitions[0]!;
      return [partition.errorCode, partition.baseOffset];
    };
    expect(await offsetOf()).toEqual([KafkaErrorCode.NONE, 0n]);
    const resent = await offsetOf();
    expect([KafkaErrorCode.NONE, KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER]).toContain(resent[0]);
    // Answered as stored, at the original's offset when the owner still knows it.
    if (resent[0] === KafkaErrorCode.NONE) expect(resent[1]).toBe(0n);
    producer.baseSequence = 1;
    expect(await offsetOf()).toEqual([KafkaErrorCode.NONE, 1n]);
  });

  it('survives mutated requests of every API: each gets an answer or a closed connection', async () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const apis = [
      ApiKey.Metadata,
      ApiKey.Fetch,
      ApiKey.ListOffsets,
      ApiKey.JoinGroup,
      ApiKey.OffsetCommit,
      ApiKey.CreateTopics,
      ApiKey.AlterConfigs,
      ApiKey.DeleteGroups,
      ApiKey.IncrementalAlterConfigs,
      ApiKey.OffsetDelete,
      ApiKey.DescribeCluster,
      ApiKey.DeleteRecords,
    ];
    for (let round = 0; round < apis.length * 10; round++) {
      const key = apis[round % apis.length]!;
      const api = spec(key);
      // Metadata (v12) asks for a topic by id and one by name, so mutations reach the uuids and nullable names.
      const body =
        key === ApiKey.Metadata
          ? {
              topics: [
                { topicId: Buffer.alloc(16, round), name: null },
                { topicId: Buffer.alloc(16), name: 'm' },
              ],
            }
          : {};
      const frame = Buffer.from(request(key, api.maxVersion, body, round));
      for (let flips = 0; flips < 3; flips++) {
        const at = 12 + (random() % Math.max(1, frame.length - 12));
        if (at < frame.length) frame[at] = random() % 256;
      }
      const connection = await open();
      connection.send(frame);
      await connection.next();
      connection.end();
    }
    await stillServes();
  });

  it('stops reading from a client that does not read its answers, holding a bounded output', async () => {
    // One 60 KiB record, then 300 fetches of it pipelined by a client that reads nothing: 18 MB of answers.
    const big = Buffer.from(batch());
    const record = encodeRecordBatch({
      ...decodeRecordBatches(big)[0]!,
      records: [{ offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.alloc(60 * 1024, 1), headers: [] }],
    });
    const producer = await open();
    producer.send(produceRequest('bounded', record));
    await producer.next();
    const fetch = request(ApiKey.Fetch, 11, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1024 * 1024,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        { name: 'bounded', partitions: [{ partitionIndex: 0, fetchOffset: 0n, partitionMaxBytes: 1024 * 1024 }] },
      ],
      forgotten: [],
      rackId: '',
    });
    const connection = await open();
    connection.pause();
    connection.send(Buffer.concat(Array.from({ length: 300 }, () => fetch)));
    let peak = 0;
    for (let sample = 0; sample < 80; sample++) {
      peak = Math.max(peak, gateway.server.bufferedOutputBytes);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    // At most the bound plus one answer per request in flight: past the bound no request of that connection starts.
    expect(peak).toBeGreaterThan(MAX_OUTPUT_BYTES);
    expect(peak).toBeLessThanOrEqual(MAX_OUTPUT_BYTES + IN_FLIGHT * MAX_FETCH_BYTES);
    expect(gateway.server.connectionCount).toBeGreaterThanOrEqual(1);
    await stillServes();
    connection.resume();
    let answers = 0;
    while (answers < 300 && (await connection.next()) !== undefined) answers++;
    expect(answers).toBe(300);
  });
});
