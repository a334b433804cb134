import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { ApiKey, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import type { PublishReceipt } from '@ledgerline/proto';
import { KafkaConnection } from './connection.js';
import type { PublishEntry } from './ledgerline-backend.js';
import type { KafkaGatewaySettings } from './settings.js';
import { RawKafkaClient, type RawRequest } from './testing/raw-kafka-client.js';
import { recordBatchOf } from './testing/record-batches.js';
import { specGatewayContext } from './testing/spec-context.js';

const PARTITIONS = 64;
/** Bound on every wait of these specs. */
const WAIT_MS = 10_000;

/** An owner that holds every publish until the spec releases it, so the spec sees how many are in flight at once. */
class HeldBackend {
  readonly held: (() => void)[] = [];
  private changed: (() => void) | undefined;

  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer }> {
    return { name: topic, partitions: PARTITIONS, topicId: Buffer.alloc(16, 7) };
  }

  publish(_topic: string, _entry: PublishEntry, _caller: unknown, onIssued?: () => void): Promise<PublishReceipt> {
    onIssued?.();
    return new Promise((resolve) => {
      this.held.push(() => resolve({ firstOffset: 0n, lastOffset: 0n, duplicate: false } as PublishReceipt));
      this.changed?.();
    });
  }

  /** Resolves once `count` publishes are held, then lets the gateway run on, so that one more would show. */
  async heldAtLeast(count: number): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (this.held.length < count) {
      if (Date.now() > deadline) throw new Error(`${this.held.length} publishes held, not ${count}`);
      await new Promise<void>((resolve) => {
        this.changed = resolve;
        setTimeout(resolve, 50);
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
  }

  releaseAll(): void {
    for (const release of this.held.splice(0)) release();
  }

  /**
   * For each count in turn: waits until at least that many publishes are held, notes how many are (more would
   * show a bound not kept), and releases them, so the requests behind them may start.
   */
  async heldInRounds(counts: readonly number[]): Promise<number[]> {
    const seen: number[] = [];
    for (const count of counts) {
      await this.heldAtLeast(count);
      seen.push(this.held.length);
      this.releaseAll();
    }
    return seen;
  }
}

/** One Produce request per partition, each one record batch of `valueBytes`. */
function produceRequests(count: number, valueBytes: number): RawRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    apiKey: ApiKey.Produce,
    version: 7,
    body: {
      transactionalId: null,
      acks: -1,
      timeoutMs: 5_000,
      topics: [
        {
          name: 'orders',
          partitions: [{ partitionIndex: index, records: recordBatchOf([Buffer.alloc(valueBytes, 120)]) }],
        },
      ],
    } satisfies Message,
  }));
}

function errorCodes(answer: Message | 'closed'): number[] {
  if (answer === 'closed') return [-1];
  const responses = answer['responses'] as { partitions: { errorCode: number }[] }[];
  return responses.flatMap((response) => response.partitions.map((partition) => partition.errorCode));
}

async function gatewayOver(backend: HeldBackend, settings: Partial<KafkaGatewaySettings>): Promise<Server> {
  const context = specGatewayContext(backend, { name: 'connection-spec', settings });
  const server = createServer((socket) => new KafkaConnection(socket, context, () => undefined));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

describe('a Kafka connection handles pipelined requests within its in-flight bounds', () => {
  let server: Server | undefined;
  let client: RawKafkaClient | undefined;

  afterEach(async () => {
    client?.end();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    client = undefined;
  });

  async function pipelineThrough(
    backend: HeldBackend,
    settings: Partial<KafkaGatewaySettings>,
    requests: RawRequest[],
  ): Promise<{ answers: Promise<(Message | 'closed')[]> }> {
    server = await gatewayOver(backend, settings);
    client = await RawKafkaClient.open((server.address() as AddressInfo).port);
    // Wrapped: an async function's returned promise would be awaited with it.
    return { answers: client.pipeline(requests) };
  }

  it('starts up to kafkaMaxInFlightRequests requests at once and the rest as earlier ones are answered, in order', async () => {
    const backend = new HeldBackend();
    const { answers } = await pipelineThrough(backend, { kafkaMaxInFlightRequests: 20 }, produceRequests(50, 10));
    expect(await backend.heldInRounds([20, 20, 10])).toEqual([20, 20, 10]);
    const codes = (await answers).map(errorCodes);
    expect(codes).toEqual(Array.from({ length: 50 }, () => [KafkaErrorCode.NONE]));
  });

  it('starts no more requests than kafkaMaxInFlightRequestBytes of frames hold, but always one', async () => {
    const backend = new HeldBackend();
    // Frames of about 40 KiB against a bound of 100 KiB: two fit, the third waits for them. A frame larger than the
    // bound starts alone, once nothing else is in flight.
    const requests = [...produceRequests(3, 40 * 1024), ...produceRequests(1, 100 * 1024)];
    const settings = { kafkaMaxInFlightRequests: 100, kafkaMaxInFlightRequestBytes: 100 * 1024 };
    const { answers } = await pipelineThrough(backend, settings, requests);
    expect(await backend.heldInRounds([2, 1, 1])).toEqual([2, 1, 1]);
    expect((await answers).map(errorCodes)).toEqual([
      [KafkaErrorCode.NONE],
      [KafkaErrorCode.NONE],
      [KafkaErrorCode.NONE],
      [KafkaErrorCode.NONE],
    ]);
  });
});
