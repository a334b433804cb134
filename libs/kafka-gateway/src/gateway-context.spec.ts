import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import type { PublishReceipt } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { RpcReason } from '@ledgerline/rpc';
import { GatewayContext } from './gateway-context.js';
import { handleMetadata } from './handlers/metadata.js';
import { handleProduce } from './handlers/produce.js';
import type { PublishEntry } from './ledgerline-backend.js';
import { ANONYMOUS } from './owner-router.js';
import { newSession, type Session } from './session.js';
import type { KafkaGatewaySettings } from './settings.js';
import { recordBatchOf } from './testing/record-batches.js';
import { specGatewayContext } from './testing/spec-context.js';

/**
 * The metadata service as the gateway sees it, in memory: topics with their
 * partition counts, and which namespaces' policies allow auto-creation.
 */
class FakeBackend {
  readonly topics = new Map<string, number>();
  readonly autoCreating = new Set<string>();
  readonly namespacesAsked: string[] = [];
  /** Calls that fail as a metadata service that cannot be reached fails them. */
  unreachableCalls = 0;

  /** GetTopic as the gateway reads it: a topic's id is fixed here from its name. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions(topic);
    if (partitions === undefined) return undefined;
    return { name: topic, partitions, topicId: Buffer.alloc(16, topic.length) };
  }

  async partitions(topic: string): Promise<number | undefined> {
    if (this.unreachableCalls > 0) {
      this.unreachableCalls--;
      throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'No connection established');
    }
    return this.topics.get(topic);
  }

  async allowsAutoTopicCreation(namespace: string): Promise<boolean> {
    this.namespacesAsked.push(namespace);
    return this.autoCreating.has(namespace);
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    this.topics.set(topic, partitions);
  }

  /** The first payload of every entry published, in the order the owner got them, and the entries themselves. */
  readonly published: string[] = [];
  readonly entries: PublishEntry[] = [];

  async publish(_topic: string, entry: PublishEntry, _caller: unknown, onIssued?: () => void): Promise<PublishReceipt> {
    this.published.push(Buffer.from(entry.messages[0]?.payload ?? []).toString());
    this.entries.push(entry);
    onIssued?.();
    return { firstOffset: 0n, lastOffset: 0n, duplicate: false } as PublishReceipt;
  }
}

const session: Session = newSession(ANONYMOUS, '127.0.0.1');

function contextOver(backend: FakeBackend, overrides: Partial<KafkaGatewaySettings> = {}): GatewayContext {
  const settings = { kafkaDefaultPartitions: 2, ...overrides };
  return specGatewayContext(backend, { name: 'gateway-context-spec', settings });
}

function request(apiKey: number, apiVersion: number, body: Message): DecodedRequest {
  return { header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' }, spec: apiSpec(apiKey)!, body };
}

async function metadataErrors(context: GatewayContext, names: string[]): Promise<number[]> {
  const body = { topics: names.map((name) => ({ name })), allowAutoTopicCreation: true };
  const answer = await handleMetadata(context, request(ApiKey.Metadata, 8, body), session);
  return (answer['topics'] as { errorCode: number }[]).map((topic) => topic.errorCode);
}

function records(value = 'hello', idempotent?: { producerId: bigint; baseSequence: number }): Buffer {
  return recordBatchOf([value], idempotent, 0n);
}

async function produceError(context: GatewayContext, topic: string): Promise<number> {
  const body = {
    transactionalId: null,
    acks: -1,
    timeoutMs: 1000,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, records: records() }] }],
  };
  const answer = (await handleProduce(context, request(ApiKey.Produce, 7, body), session))!;
  const [response] = answer['responses'] as { partitions: { errorCode: number }[] }[];
  return response!.partitions[0]!.errorCode;
}

describe('auto-creation of Kafka topics', () => {
  it('refuses an unknown topic with UNKNOWN_TOPIC_OR_PARTITION where the namespace does not allow it', async () => {
    const backend = new FakeBackend();
    const context = contextOver(backend);
    expect(await metadataErrors(context, ['orders', 'acme/closed/orders'])).toEqual([
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(await produceError(context, 'orders')).toBe(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(backend.topics.size).toBe(0);
    expect(new Set(backend.namespacesAsked)).toEqual(new Set(['public/default', 'acme/closed']));
  });

  it('creates an unknown topic on Metadata and Produce where the namespace allows it', async () => {
    const backend = new FakeBackend();
    backend.autoCreating.add('public/default');
    backend.autoCreating.add('acme/open');
    const context = contextOver(backend);
    expect(await metadataErrors(context, ['orders', 'acme/open/orders', 'acme/closed/orders'])).toEqual([
      KafkaErrorCode.NONE,
      KafkaErrorCode.NONE,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(await produceError(context, 'payments')).toBe(KafkaErrorCode.NONE);
    expect([...backend.topics]).toEqual([
      ['persistent://public/default/orders', 2],
      ['persistent://acme/open/orders', 2],
      ['persistent://public/default/payments', 2],
    ]);
  });

  it('creates nothing when kafkaAutoCreateTopics is off, whatever the namespace allows', async () => {
    const backend = new FakeBackend();
    backend.autoCreating.add('public/default');
    const context = contextOver(backend, { kafkaAutoCreateTopics: false });
    expect(await metadataErrors(context, ['orders'])).toEqual([KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await produceError(context, 'orders')).toBe(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(backend.topics.size).toBe(0);
    expect(backend.namespacesAsked).toEqual([]);
  });

  it('does not create on a Metadata request that does not ask for it, nor ask the namespace', async () => {
    const backend = new FakeBackend();
    backend.autoCreating.add('public/default');
    const context = contextOver(backend);
    const body = { topics: [{ name: 'orders' }], allowAutoTopicCreation: false };
    const answer = await handleMetadata(context, request(ApiKey.Metadata, 8, body), session);
    expect((answer['topics'] as { errorCode: number }[])[0]!.errorCode).toBe(KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(backend.topics.size).toBe(0);
    expect(backend.namespacesAsked).toEqual([]);
  });
});

describe('Metadata for every topic of a namespace that does not exist yet', () => {
  it('answers with no topics instead of failing the request (which closes the connection)', async () => {
    const backend = new FakeBackend() as FakeBackend & { listTopics(): Promise<string[]> };
    backend.listTopics = async () => {
      throw new LedgerlineError(
        'NOT_FOUND',
        MetadataServiceReason.NAMESPACE_NOT_FOUND,
        'namespace public/default does not exist',
      );
    };
    const answer = await handleMetadata(contextOver(backend), request(ApiKey.Metadata, 8, { topics: null }), session);
    expect(answer['topics']).toEqual([]);
  });
});

describe('Metadata while the metadata service cannot be reached', () => {
  // librdkafka fails every queued message of a topic whose Metadata carries a topic-level error (kcat did so in CI).
  it('keeps trying within kafkaBackendTimeoutMs and answers the topic once the service is back', async () => {
    const backend = new FakeBackend();
    backend.topics.set('persistent://public/default/orders', 2);
    backend.unreachableCalls = 3;
    expect(await metadataErrors(contextOver(backend), ['orders'])).toEqual([KafkaErrorCode.NONE]);
    expect(backend.unreachableCalls).toBe(0);
  });

  it('answers LEADER_NOT_AVAILABLE, which clients retry, when the service stays out of reach', async () => {
    const backend = new FakeBackend();
    backend.unreachableCalls = Number.MAX_SAFE_INTEGER;
    const context = contextOver(backend, { kafkaBackendTimeoutMs: 300 });
    expect(await metadataErrors(context, ['orders'])).toEqual([KafkaErrorCode.LEADER_NOT_AVAILABLE]);
  });

  it('answers from a partition count read before the service went out of reach, however old', async () => {
    const backend = new FakeBackend();
    backend.topics.set('persistent://public/default/orders', 2);
    const context = contextOver(backend, { kafkaBackendTimeoutMs: 300 });
    const now = Date.now();
    expect(await metadataErrors(context, ['orders'])).toEqual([KafkaErrorCode.NONE]);
    backend.unreachableCalls = Number.MAX_SAFE_INTEGER;
    jest.spyOn(Date, 'now').mockReturnValue(now + 3_600_000);
    try {
      expect(await produceError(context, 'orders')).toBe(KafkaErrorCode.NONE);
    } finally {
      jest.restoreAllMocks();
    }
  });
});

describe('produce requests pipelined on one connection', () => {
  it("reach the partition's owner in the order they arrived, even when the first one's lookup is slower", async () => {
    const backend = new FakeBackend();
    backend.topics.set('persistent://public/default/orders', 1);
    // The first lookup of the partition count is slow; the next ones are not, so the second request would overtake.
    let lookups = 0;
    const partitions = backend.partitions.bind(backend);
    backend.partitions = async (topic: string) => {
      if (lookups++ === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      return partitions(topic);
    };
    const context = contextOver(backend);
    const connection = newSession(ANONYMOUS, '127.0.0.1');
    const produce = (value: string) =>
      handleProduce(
        context,
        request(ApiKey.Produce, 7, {
          transactionalId: null,
          acks: -1,
          timeoutMs: 1000,
          topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, records: records(value) }] }],
        }),
        connection,
      );
    await Promise.all([produce('first'), produce('second'), produce('third')]);
    expect(backend.published).toEqual(['first', 'second', 'third']);
    expect(connection.produceOrder.size).toBe(0);
  });
});

describe('produce from an idempotent producer', () => {
  it('asks the owner to refuse a gap in its sequence (Kafka numbers its batches without gaps), and only its', async () => {
    const backend = new FakeBackend();
    backend.topics.set('persistent://public/default/orders', 1);
    const context = contextOver(backend);
    for (const batch of [records('plain'), records('idempotent', { producerId: 7n, baseSequence: 3 })]) {
      const body = {
        transactionalId: null,
        acks: -1,
        timeoutMs: 1000,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, records: batch }] }],
      };
      await handleProduce(context, request(ApiKey.Produce, 7, body), session);
    }
    expect(backend.entries.map((entry) => [entry.producerName, entry.sequenceId, entry.contiguousSequence])).toEqual([
      ['', 0n, false],
      ['kafka-7-0', 3n, true],
    ]);
  });
});
