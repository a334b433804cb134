import { LedgerlineError } from '@ledgerline/errors';
import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { createLogger } from '@ledgerline/service-kit';
import { GatewayContext } from '../gateway-context.js';
import { soloPeers, type AdvertisedBroker } from '../gateway-peers.js';
import { GroupCoordinator } from '../group-coordinator.js';
import type { LedgerlineBackend } from '../ledgerline-backend.js';
import { ANONYMOUS } from '../owner-router.js';
import { newSession } from '../session.js';
import { resolveKafkaGatewaySettings } from '../settings.js';
import { TopicNames } from '../topic-names.js';
import { handleCreatePartitions } from './create-partitions.js';
import { handleCreateTopics } from './topics-admin.js';

/**
 * The metadata service's topics as the admin handlers meet them: partition
 * counts (0: not partitioned), growth checked as UpdatePartitionedTopic
 * checks it, and a namespace limit.
 */
class TopicsBackend {
  readonly topics = new Map<string, number>();
  /** Topics the namespace has room for, each partition counting. */
  room = Number.MAX_SAFE_INTEGER;
  /** A grow the metadata service refuses although the gateway's read allowed it (another grow came first). */
  overtaken = false;

  /** GetTopic as the gateway reads it: a topic's id is fixed here from its name. */
  async topic(topic: string): Promise<{ name: string; partitions: number; topicId: Buffer } | undefined> {
    const partitions = await this.partitions(topic);
    if (partitions === undefined) return undefined;
    return { name: topic, partitions, topicId: Buffer.alloc(16, topic.length) };
  }

  async partitions(topic: string): Promise<number | undefined> {
    return this.topics.get(topic);
  }

  async createTopic(topic: string, partitions: number): Promise<void> {
    if (partitions > this.room) {
      throw new LedgerlineError('RESOURCE_EXHAUSTED', MetadataServiceReason.TOO_MANY_TOPICS, 'maxTopics');
    }
    this.topics.set(topic, partitions);
  }

  async growTopic(topic: string, partitions: number, validateOnly: boolean): Promise<void> {
    if (this.overtaken) {
      throw new LedgerlineError('FAILED_PRECONDITION', MetadataServiceReason.PARTITION_COUNT_NOT_INCREASED, 'later');
    }
    if (!validateOnly) this.topics.set(topic, partitions);
  }
}

const session = newSession(ANONYMOUS, '127.0.0.1');
const HOME = 'persistent://public/default';

function contextOver(backend: TopicsBackend, brokerIds = [1]): GatewayContext {
  const settings = resolveKafkaGatewaySettings({ kafkaDefaultPartitions: 3 });
  const brokers: AdvertisedBroker[] = brokerIds.map((nodeId) => ({ nodeId, host: 'localhost', port: 9090 + nodeId }));
  const context = new GatewayContext(
    settings,
    backend as unknown as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    () => brokers[0]!,
    createLogger('topics-admin-spec', { level: 'silent' }),
  );
  context.peers = { ...soloPeers(() => brokers[0]!), brokers: () => brokers, coordinatorOf: () => brokers[0]! };
  return context;
}

function request(apiKey: number, apiVersion: number, body: Message): DecodedRequest {
  return { header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' }, spec: apiSpec(apiKey)!, body };
}

type NewTopic = {
  name: string;
  numPartitions?: number;
  replicationFactor?: number;
  assignments?: { partitionIndex: number; brokerIds: number[] }[];
  configs?: { name: string; value: string | null }[];
};

/** CreateTopics v4 of the topics: [errorCode, errorMessage] of each. */
async function createTopics(
  context: GatewayContext,
  topics: NewTopic[],
  validateOnly = false,
): Promise<[number, string | null][]> {
  const body = {
    topics: topics.map((topic) => ({
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [],
      configs: [],
      ...topic,
    })),
    timeoutMs: 1000,
    validateOnly,
  };
  const answer = await handleCreateTopics(context, request(ApiKey.CreateTopics, 4, body), session);
  return (answer['topics'] as { errorCode: number; errorMessage: string | null }[]).map((topic) => [
    topic.errorCode,
    topic.errorMessage,
  ]);
}

/** CreatePartitions v3: the error code of each topic. */
async function createPartitions(
  context: GatewayContext,
  topics: { name: string; count: number; assignments?: { brokerIds: number[] }[] | null }[],
  validateOnly = false,
): Promise<number[]> {
  const body = { topics: topics.map((topic) => ({ assignments: null, ...topic })), timeoutMs: 1000, validateOnly };
  const answer = await handleCreatePartitions(context, request(ApiKey.CreatePartitions, 3, body), session);
  return (answer['results'] as { errorCode: number }[]).map((result) => result.errorCode);
}

const codes = (answers: [number, string | null][]): number[] => answers.map(([code]) => code);

describe('CreateTopics configs', () => {
  it('accepts the topic configs Kafka knows with well-typed values', async () => {
    const backend = new TopicsBackend();
    const answers = await createTopics(contextOver(backend), [
      {
        name: 'configured',
        numPartitions: 2,
        configs: [
          { name: 'retention.ms', value: '86400000' },
          { name: 'cleanup.policy', value: 'delete' },
          { name: 'compression.type', value: 'lz4' },
          { name: 'min.insync.replicas', value: '1' },
          { name: 'unclean.leader.election.enable', value: 'false' },
          { name: 'min.cleanable.dirty.ratio', value: '0.5' },
        ],
      },
    ]);
    expect(answers).toEqual([[KafkaErrorCode.NONE, null]]);
    expect(backend.topics.get(`${HOME}/configured`)).toBe(2);
  });

  it('answers an unknown config, a null value and a value of the wrong type with INVALID_CONFIG, creating nothing', async () => {
    const backend = new TopicsBackend();
    const answers = await createTopics(contextOver(backend), [
      { name: 'unknown', configs: [{ name: 'retention.mss', value: '1' }] },
      { name: 'null-value', configs: [{ name: 'retention.ms', value: null }] },
      { name: 'not-a-number', configs: [{ name: 'retention.ms', value: 'a day' }] },
      { name: 'not-an-int', configs: [{ name: 'max.message.bytes', value: '4294967296' }] },
      { name: 'not-a-policy', configs: [{ name: 'cleanup.policy', value: 'delete,shred' }] },
      { name: 'not-a-codec', configs: [{ name: 'compression.type', value: 'brotli' }] },
      { name: 'not-a-boolean', configs: [{ name: 'preallocate', value: 'yes' }] },
    ]);
    expect(codes(answers)).toEqual(Array(7).fill(KafkaErrorCode.INVALID_CONFIG));
    expect(answers[0]![1]).toBe('Unknown topic config name: retention.mss');
    expect(backend.topics.size).toBe(0);
  });
});

describe('CreateTopics replica assignments', () => {
  it('creates as many partitions as a valid assignment of live gateways names, and nothing with validate_only', async () => {
    const backend = new TopicsBackend();
    const context = contextOver(backend, [1, 2, 3]);
    const assignments = [
      { partitionIndex: 1, brokerIds: [2, 3] },
      { partitionIndex: 0, brokerIds: [1, 2] },
      { partitionIndex: 2, brokerIds: [3, 1] },
    ];
    expect(codes(await createTopics(context, [{ name: 'checked', assignments }], true))).toEqual([KafkaErrorCode.NONE]);
    expect(backend.topics.size).toBe(0);
    expect(codes(await createTopics(context, [{ name: 'assigned', assignments }]))).toEqual([KafkaErrorCode.NONE]);
    expect(backend.topics.get(`${HOME}/assigned`)).toBe(3);
  });

  it("refuses assignments as Kafka's controller does, creating nothing", async () => {
    const backend = new TopicsBackend();
    const context = contextOver(backend, [1, 2]);
    const assigned = (...brokerIds: number[][]) =>
      brokerIds.map((ids, partitionIndex) => ({ partitionIndex, brokerIds: ids }));
    const answers = await createTopics(context, [
      { name: 'factor-too', replicationFactor: 1, assignments: assigned([1]) },
      { name: 'count-too', numPartitions: 1, assignments: assigned([1]) },
      { name: 'unknown-broker', assignments: assigned([1], [9]) },
      { name: 'broker-twice', assignments: assigned([1, 1]) },
      { name: 'uneven', assignments: assigned([1], [1, 2]) },
      { name: 'empty', assignments: assigned([]) },
      {
        name: 'gap',
        assignments: [
          { partitionIndex: 0, brokerIds: [1] },
          { partitionIndex: 2, brokerIds: [2] },
        ],
      },
      {
        name: 'twice',
        assignments: [
          { partitionIndex: 0, brokerIds: [1] },
          { partitionIndex: 0, brokerIds: [2] },
        ],
      },
    ]);
    expect(codes(answers)).toEqual([
      KafkaErrorCode.INVALID_REPLICATION_FACTOR,
      KafkaErrorCode.INVALID_PARTITIONS,
      ...Array(6).fill(KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT),
    ]);
    expect(answers[2]![1]).toBe('The manual partition assignment includes broker 9, but no such broker is registered.');
    expect(backend.topics.size).toBe(0);
  });

  it('refuses a replication factor below 1 other than -1, and answers a full namespace with POLICY_VIOLATION', async () => {
    const backend = new TopicsBackend();
    backend.room = 2;
    const answers = await createTopics(contextOver(backend), [
      { name: 'zero-factor', numPartitions: 1, replicationFactor: 0 },
      { name: 'too-many', numPartitions: 3 },
    ]);
    expect(codes(answers)).toEqual([KafkaErrorCode.INVALID_REPLICATION_FACTOR, KafkaErrorCode.POLICY_VIOLATION]);
    expect(backend.topics.size).toBe(0);
  });
});

describe('CreateTopics duplicates', () => {
  it('answers a topic named twice once, with INVALID_REQUEST, creating it under neither entry; the others are created', async () => {
    const backend = new TopicsBackend();
    const body = {
      topics: ['twice', 'once', 'twice'].map((name, index) => ({
        name,
        numPartitions: index + 1,
        replicationFactor: -1,
        assignments: [],
        configs: [],
      })),
      timeoutMs: 1000,
      validateOnly: false,
    };
    const answer = await handleCreateTopics(contextOver(backend), request(ApiKey.CreateTopics, 4, body), session);
    expect(answer['topics']).toEqual([
      { name: 'once', errorCode: KafkaErrorCode.NONE, errorMessage: null },
      { name: 'twice', errorCode: KafkaErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic name.' },
    ]);
    expect([...backend.topics]).toEqual([[`${HOME}/once`, 2]]);
  });
});

describe('CreatePartitions', () => {
  it("grows a partitioned topic and the gateway's partition count at once; validate_only changes nothing", async () => {
    const backend = new TopicsBackend();
    backend.topics.set(`${HOME}/orders`, 2);
    const context = contextOver(backend);
    expect(await context.partitionCount(`${HOME}/orders`, ANONYMOUS, false)).toBe(2);
    expect(await createPartitions(context, [{ name: 'orders', count: 5 }], true)).toEqual([KafkaErrorCode.NONE]);
    expect(backend.topics.get(`${HOME}/orders`)).toBe(2);
    expect(await createPartitions(context, [{ name: 'orders', count: 4 }])).toEqual([KafkaErrorCode.NONE]);
    expect(backend.topics.get(`${HOME}/orders`)).toBe(4);
    expect(await context.partitionCount(`${HOME}/orders`, ANONYMOUS, false)).toBe(4);
  });

  it('takes assignments of live gateways, one per new partition', async () => {
    const backend = new TopicsBackend();
    backend.topics.set(`${HOME}/orders`, 2);
    const context = contextOver(backend, [1, 2]);
    const grown = await createPartitions(context, [
      { name: 'orders', count: 4, assignments: [{ brokerIds: [2] }, { brokerIds: [1] }] },
    ]);
    expect(grown).toEqual([KafkaErrorCode.NONE]);
    expect(backend.topics.get(`${HOME}/orders`)).toBe(4);
  });

  it("refuses shrinking, no growth, unknown and plain topics, bad assignments and duplicates with Kafka's codes, growing nothing", async () => {
    const backend = new TopicsBackend();
    backend.topics.set(`${HOME}/orders`, 3);
    backend.topics.set(`${HOME}/plain`, 0);
    const context = contextOver(backend, [1, 2]);
    const answers = await createPartitions(context, [
      { name: 'orders', count: 2 },
      { name: 'missing', count: 4 },
      { name: 'plain', count: 2 },
      { name: 'not a name!', count: 4 },
      { name: 'acme/ns/orders', count: 20_000 },
    ]);
    expect(answers).toEqual([
      KafkaErrorCode.INVALID_PARTITIONS,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      KafkaErrorCode.INVALID_PARTITIONS,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      KafkaErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    expect(await createPartitions(context, [{ name: 'orders', count: 3 }])).toEqual([
      KafkaErrorCode.INVALID_PARTITIONS,
    ]);
    expect(await createPartitions(context, [{ name: 'plain', count: 1 }])).toEqual([KafkaErrorCode.INVALID_PARTITIONS]);
    // Two partitions added need two assignments; an empty list (not null) is none for two.
    for (const assignments of [[{ brokerIds: [1] }], []]) {
      expect(await createPartitions(context, [{ name: 'orders', count: 5, assignments }])).toEqual([
        KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT,
      ]);
    }
    expect(
      await createPartitions(context, [
        { name: 'orders', count: 5, assignments: [{ brokerIds: [1] }, { brokerIds: [3] }] },
      ]),
    ).toEqual([KafkaErrorCode.INVALID_REPLICA_ASSIGNMENT]);
    expect(
      await createPartitions(context, [
        { name: 'orders', count: 5 },
        { name: 'orders', count: 6 },
      ]),
    ).toEqual([KafkaErrorCode.INVALID_REQUEST, KafkaErrorCode.INVALID_REQUEST]);
    expect(backend.topics.get(`${HOME}/orders`)).toBe(3);
    expect(backend.topics.get(`${HOME}/plain`)).toBe(0);
  });

  it('answers INVALID_PARTITIONS when the metadata service finds the topic grew meanwhile', async () => {
    const backend = new TopicsBackend();
    backend.topics.set(`${HOME}/orders`, 2);
    backend.overtaken = true;
    expect(await createPartitions(contextOver(backend), [{ name: 'orders', count: 3 }])).toEqual([
      KafkaErrorCode.INVALID_PARTITIONS,
    ]);
  });
});
