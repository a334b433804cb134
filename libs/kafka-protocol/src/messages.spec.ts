import {
  API_SPECS,
  ApiKey,
  apiSpec,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  isFlexible,
  KafkaProtocolReason,
  readStruct,
  supportedApiVersions,
  writeStruct,
  ByteReader,
  ByteWriter,
  type ApiSpec,
  type Message,
} from './index.js';

// kafkajs's own request encoders and response decoders: an independent implementation of the same specs.
/* eslint-disable @typescript-eslint/no-require-imports */
const kafkajsRequest = require('kafkajs/src/protocol/request') as (options: object) => Promise<{ buffer: Buffer }>;
type KafkajsProtocol = (args: object) => {
  request: object;
  response: { decode: (data: Buffer) => Promise<unknown> };
};
const kafkajsRequests = (require('kafkajs/src/protocol/requests') as { requests: unknown }).requests as Record<
  string,
  { protocol: (options: { version: number }) => KafkajsProtocol }
>;
/* eslint-enable @typescript-eslint/no-require-imports */

async function kafkajsFrame(api: string, version: number, args: object): Promise<Buffer> {
  const { request } = kafkajsRequests[api]!.protocol({ version })(args);
  const encoded = await kafkajsRequest({ correlationId: 42, clientId: 'spec', request });
  return encoded.buffer.subarray(4);
}

function spec(key: number): ApiSpec {
  const found = apiSpec(key);
  if (found === undefined) throw new Error(`no spec for ${key}`);
  return found;
}

describe('request decoding against kafkajs encoders', () => {
  it('reads kafkajs Metadata v6 and ApiVersions v2 requests', async () => {
    const metadata = decodeRequest(
      await kafkajsFrame('Metadata', 6, { topics: ['orders', 'payments'], allowAutoTopicCreation: false }),
    );
    expect(metadata.header).toEqual({ apiKey: ApiKey.Metadata, apiVersion: 6, correlationId: 42, clientId: 'spec' });
    // Before v10 a topic has no id on the wire: it reads as Kafka's zero id.
    const zero = Buffer.alloc(16);
    expect(metadata.body['topics']).toEqual([
      { topicId: zero, name: 'orders' },
      { topicId: zero, name: 'payments' },
    ]);
    expect(metadata.body['allowAutoTopicCreation']).toBe(false);
    const versions = decodeRequest(await kafkajsFrame('ApiVersions', 2, {}));
    expect(versions.spec.name).toBe('ApiVersions');
  });

  it('reads a kafkajs Fetch v11 request with its partitions and rack', async () => {
    const decoded = decodeRequest(
      await kafkajsFrame('Fetch', 11, {
        replicaId: -1,
        maxWaitTime: 500,
        minBytes: 1,
        maxBytes: 1024,
        rackId: 'r1',
        topics: [{ topic: 'orders', partitions: [{ partition: 2, fetchOffset: '17', maxBytes: 512 }] }],
      }),
    );
    expect(decoded.body['maxWaitMs']).toBe(500);
    expect(decoded.body['rackId']).toBe('r1');
    // Fields of later versions take their defaults: the zero topic id (v13+), no last fetched epoch (v12+).
    expect(decoded.body['topics']).toEqual([
      {
        name: 'orders',
        topicId: Buffer.alloc(16),
        partitions: [
          {
            partitionIndex: 2,
            currentLeaderEpoch: -1,
            fetchOffset: 17n,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: 512,
          },
        ],
      },
    ]);
  });

  it('reads kafkajs JoinGroup v5 and OffsetCommit v5 requests', async () => {
    const join = decodeRequest(
      await kafkajsFrame('JoinGroup', 5, {
        groupId: 'billing',
        sessionTimeout: 30000,
        rebalanceTimeout: 60000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        groupProtocols: [{ name: 'RoundRobinAssigner', metadata: Buffer.from([1, 2, 3]) }],
      }),
    );
    expect(join.body['groupId']).toBe('billing');
    expect(join.body['rebalanceTimeoutMs']).toBe(60000);
    expect((join.body['protocols'] as Message[])[0]!['metadata']).toEqual(Buffer.from([1, 2, 3]));
    const commit = decodeRequest(
      await kafkajsFrame('OffsetCommit', 5, {
        groupId: 'billing',
        groupGenerationId: 3,
        memberId: 'm-1',
        topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '99' }] }],
      }),
    );
    expect(commit.body['topics']).toEqual([
      {
        name: 'orders',
        partitions: [
          {
            partitionIndex: 0,
            committedOffset: 99n,
            committedLeaderEpoch: -1,
            commitTimestamp: -1n,
            committedMetadata: null,
          },
        ],
      },
    ]);
  });
});

describe('admin requests against kafkajs encoders', () => {
  it('reads kafkajs CreatePartitions v1 requests, with assignments and without (null)', async () => {
    const grow = decodeRequest(
      await kafkajsFrame('CreatePartitions', 1, {
        topicPartitions: [
          { topic: 'orders', count: 4, assignments: [[1], [2, 3]] },
          { topic: 'other', count: 2 },
        ],
        validateOnly: true,
        timeout: 5000,
      }),
    );
    expect(grow.body).toEqual({
      topics: [
        { name: 'orders', count: 4, assignments: [{ brokerIds: [1] }, { brokerIds: [2, 3] }] },
        { name: 'other', count: 2, assignments: null },
      ],
      timeoutMs: 5000,
      validateOnly: true,
    });
  });

  it('reads a kafkajs CreateTopics v3 request with replica assignments and configs', async () => {
    const create = decodeRequest(
      await kafkajsFrame('CreateTopics', 3, {
        topics: [
          {
            topic: 'orders',
            replicaAssignment: [{ partition: 0, replicas: [1, 2] }],
            configEntries: [{ name: 'retention.ms', value: '1' }],
          },
        ],
        validateOnly: false,
        timeout: 1000,
      }),
    );
    expect((create.body['topics'] as Message[])[0]).toEqual({
      name: 'orders',
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [{ partitionIndex: 0, brokerIds: [1, 2] }],
      configs: [{ name: 'retention.ms', value: '1' }],
    });
  });

  it('reads a flexible CreatePartitions v2 request byte by byte and answers with response header v1', () => {
    // Key 37, version 2, correlation 3, client id "rd" (int16 length), no header tags; a compact array of one topic:
    // compact "t", count 5, null compact assignments, no tags; timeout 1000, validate_only false, no tags.
    const frameBody = Buffer.concat([
      Buffer.from([0, 37, 0, 2, 0, 0, 0, 3, 0, 2]),
      Buffer.from('rd'),
      Buffer.from([0, 2, 2]),
      Buffer.from('t'),
      Buffer.from([0, 0, 0, 5, 0, 0, 0, 0, 0x03, 0xe8, 0, 0]),
    ]);
    const decoded = decodeRequest(frameBody);
    expect(decoded.body).toEqual({
      topics: [{ name: 't', count: 5, assignments: null }],
      timeoutMs: 1000,
      validateOnly: false,
    });
    const answer = encodeResponse(spec(ApiKey.CreatePartitions), 2, 3, {
      throttleTimeMs: 0,
      results: [{ name: 't', errorCode: 37, errorMessage: null }],
    });
    // size, correlation id, header tags, throttle, compact array of one: compact "t", error 37, null message, tags; tags.
    expect([...answer.subarray(4)]).toEqual([0, 0, 0, 3, 0, 0, 0, 0, 0, 2, 2, 0x74, 0, 37, 0, 0, 0]);
  });
});

describe('group and config admin requests', () => {
  it('reads kafkajs DeleteGroups v1 and AlterConfigs v1 requests', async () => {
    const deleteGroups = decodeRequest(await kafkajsFrame('DeleteGroups', 1, ['billing', 'audit']));
    expect(deleteGroups.body).toEqual({ groupsNames: ['billing', 'audit'] });
    const alter = decodeRequest(
      await kafkajsFrame('AlterConfigs', 1, {
        resources: [
          {
            type: 2,
            name: 'orders',
            configEntries: [
              { name: 'retention.ms', value: '-1' },
              { name: 'cleanup.policy', value: 'delete' },
            ],
          },
        ],
        validateOnly: true,
      }),
    );
    expect(alter.body).toEqual({
      resources: [
        {
          resourceType: 2,
          resourceName: 'orders',
          configs: [
            { name: 'retention.ms', value: '-1' },
            { name: 'cleanup.policy', value: 'delete' },
          ],
        },
      ],
      validateOnly: true,
    });
  });

  it('reads a kafkajs DeleteRecords v1 request and writes the answer kafkajs reads', async () => {
    const decoded = decodeRequest(
      await kafkajsFrame('DeleteRecords', 1, {
        topics: [{ topic: 'orders', partitions: [{ partition: 2, offset: '17' }] }],
        timeout: 3000,
      }),
    );
    expect(decoded.body).toEqual({
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, offset: 17n }] }],
      timeoutMs: 3000,
    });
    const { response } = kafkajsRequests['DeleteRecords']!.protocol({ version: 1 })({ topics: [] });
    const answer = encodeResponse(spec(ApiKey.DeleteRecords), 1, 5, {
      throttleTimeMs: 0,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 2, lowWatermark: 17n, errorCode: 0 }] }],
    });
    const read = (await response.decode(answer.subarray(8))) as {
      topics: { topic: string; partitions: { partition: number; lowWatermark: unknown; errorCode: number }[] }[];
    };
    const [partition] = read.topics[0]!.partitions;
    // kafkajs reads an int64 as a Long.
    expect([
      read.topics[0]!.topic,
      partition!.partition,
      String(partition!.lowWatermark),
      partition!.errorCode,
    ]).toEqual(['orders', 2, '17', 0]);
  });

  it('reads a flexible IncrementalAlterConfigs v1 request byte by byte, a null value (DELETE) included', () => {
    // Key 44, version 1, correlation 4, client id "rd", no header tags; a compact array of one resource: type 2,
    // compact "t", a compact array of two configs (compact name, operation, compact value or null, no tags), no
    // tags; validate_only true, no tags.
    const frameBody = Buffer.concat([
      Buffer.from([0, 44, 0, 1, 0, 0, 0, 4, 0, 2]),
      Buffer.from('rd'),
      Buffer.from([0, 2, 2, 2]),
      Buffer.from('t'),
      Buffer.from([3, 15]),
      Buffer.from('cleanup.policy'),
      Buffer.from([2, 7]),
      Buffer.from('delete'),
      Buffer.from([0, 13]),
      Buffer.from('retention.ms'),
      Buffer.from([1, 0, 0, 0, 1, 0]),
    ]);
    expect(decodeRequest(frameBody).body).toEqual({
      resources: [
        {
          resourceType: 2,
          resourceName: 't',
          configs: [
            { name: 'cleanup.policy', configOperation: 2, value: 'delete' },
            { name: 'retention.ms', configOperation: 1, value: null },
          ],
        },
      ],
      validateOnly: true,
    });
  });

  it('reads a flexible DescribeCluster v0 request and answers with response header v1', () => {
    // Key 60, version 0, correlation 6, client id "rd", no header tags; include_cluster_authorized_operations
    // false, no tags.
    const frameBody = Buffer.concat([
      Buffer.from([0, 60, 0, 0, 0, 0, 0, 6, 0, 2]),
      Buffer.from('rd'),
      Buffer.from([0, 0, 0]),
    ]);
    expect(decodeRequest(frameBody).body).toEqual({ includeClusterAuthorizedOperations: false });
    const answer = encodeResponse(spec(ApiKey.DescribeCluster), 0, 6, {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      clusterId: 'c',
      controllerId: 1,
      brokers: [{ brokerId: 1, host: 'h', port: 9092, rack: null }],
      clusterAuthorizedOperations: -2147483648,
    });
    // size, correlation id, header tags; throttle, error, null message, compact "c", controller 1; a compact array
    // of one broker: id 1, compact "h", port 9092, null rack, tags; authorized operations, tags.
    expect([...answer.subarray(4)]).toEqual([
      0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x63, 0, 0, 0, 1, 2, 0, 0, 0, 1, 2, 0x68, 0, 0, 0x23, 0x84, 0, 0, 0x80, 0,
      0, 0, 0,
    ]);
  });

  it('reads a DescribeProducers v0 request and writes its answer as DescribeProducers*.json lays them out', () => {
    // Key 61, version 0, correlation 7, client id "j", no header tags; a compact array of one topic: compact
    // "t", a compact array of partitions 0 and 2, topic tags; request tags.
    const frameBody = Buffer.from([
      0, 61, 0, 0, 0, 0, 0, 7, 0, 1, 0x6a, 0, 2, 2, 0x74, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0,
    ]);
    expect(decodeRequest(frameBody).body).toEqual({ topics: [{ name: 't', partitionIndexes: [0, 2] }] });
    const answer = encodeResponse(spec(ApiKey.DescribeProducers), 0, 7, {
      throttleTimeMs: 0,
      topics: [
        {
          name: 't',
          partitions: [
            {
              partitionIndex: 0,
              errorCode: 0,
              errorMessage: null,
              activeProducers: [
                {
                  producerId: 5n,
                  producerEpoch: 1,
                  lastSequence: 9,
                  lastTimestamp: -1n,
                  coordinatorEpoch: -1,
                  currentTxnStartOffset: -1n,
                },
              ],
            },
            { partitionIndex: 2, errorCode: 3, errorMessage: null, activeProducers: [] },
          ],
        },
      ],
    });
    // size, correlation id, header tags; throttle; one topic: compact "t"; two partitions: index 0, error 0, null
    // message, one producer (id 5 int64, epoch 1 int32, last sequence 9, last timestamp -1, coordinator epoch -1,
    // txn start -1, tags), tags; index 2, error 3, null message, no producers, tags; topic tags; response tags.
    const minusOne64 = Array(8).fill(0xff);
    const minusOne32 = Array(4).fill(0xff);
    expect([...answer.subarray(4)]).toEqual([
      ...[0, 0, 0, 7, 0, 0, 0, 0, 0, 2, 2, 0x74, 3],
      ...[0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 1, 0, 0, 0, 9],
      ...[...minusOne64, ...minusOne32, ...minusOne64, 0, 0],
      ...[0, 0, 0, 2, 0, 3, 0, 1, 0, 0, 0],
    ]);
    const decoded = decodeResponse(spec(ApiKey.DescribeProducers), 0, answer.subarray(4));
    expect(decoded.body['topics']).toHaveLength(1);
  });

  it('reads an OffsetDelete v0 request as the Java client sends it', () => {
    const api = spec(ApiKey.OffsetDelete);
    const body = {
      groupId: 'billing',
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0 }, { partitionIndex: 3 }] }],
    };
    const header = { apiKey: api.key, apiVersion: 0, correlationId: 2, clientId: 'java' };
    expect(decodeRequest(encodeRequest(api, header, body).subarray(4)).body).toEqual(body);
  });
});

describe('response encoding against kafkajs decoders', () => {
  async function kafkajsDecode(api: string, version: number, frameWithSize: Buffer): Promise<Record<string, unknown>> {
    const { response } = kafkajsRequests[api]!.protocol({ version })({});
    // kafkajs decoders read the body after the correlation id.
    return (await response.decode(frameWithSize.subarray(8))) as Record<string, unknown>;
  }

  it('writes DeleteGroups v1 and AlterConfigs v1 answers that kafkajs reads', async () => {
    const deleted = encodeResponse(spec(ApiKey.DeleteGroups), 1, 3, {
      throttleTimeMs: 0,
      results: [
        { groupId: 'billing', errorCode: 0 },
        { groupId: 'audit', errorCode: 69 },
      ],
    });
    const read = await kafkajsDecode('DeleteGroups', 1, deleted);
    expect(read['results']).toEqual([
      { groupId: 'billing', errorCode: 0 },
      expect.objectContaining({ groupId: 'audit', errorCode: 69 }),
    ]);
    const altered = encodeResponse(spec(ApiKey.AlterConfigs), 1, 4, {
      throttleTimeMs: 0,
      responses: [{ errorCode: 40, errorMessage: 'bad', resourceType: 2, resourceName: 'orders' }],
    });
    expect((await kafkajsDecode('AlterConfigs', 1, altered))['resources']).toEqual([
      { errorCode: 40, errorMessage: 'bad', resourceType: 2, resourceName: 'orders' },
    ]);
  });

  it('writes ApiVersions v2 and Metadata v6 that kafkajs reads', async () => {
    const apiVersions = encodeResponse(spec(ApiKey.ApiVersions), 2, 7, {
      errorCode: 0,
      apiKeys: supportedApiVersions(),
      throttleTimeMs: 0,
    });
    expect(apiVersions.readInt32BE(4)).toBe(7);
    const decoded = await kafkajsDecode('ApiVersions', 2, apiVersions);
    expect(decoded['apiVersions']).toContainEqual({ apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 17 });
    const metadata = encodeResponse(spec(ApiKey.Metadata), 6, 8, {
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
      clusterId: 'ledgerline',
      controllerId: 1,
      topics: [
        {
          errorCode: 0,
          name: 'orders',
          isInternal: false,
          partitions: [
            { errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1], isrNodes: [1], offlineReplicas: [] },
          ],
        },
      ],
    });
    const read = await kafkajsDecode('Metadata', 6, metadata);
    expect(read['brokers']).toEqual([{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }]);
    expect((read['topicMetadata'] as { topic: string }[])[0]!.topic).toBe('orders');
  });
});

/** A value for every field, so a round trip covers each one (not only defaults). */
function sample(fields: readonly unknown[], depth = 0): Message {
  const message: Message = {};
  for (const field of fields as { name: string; type: unknown }[]) message[field.name] = sampleValue(field.type, depth);
  return message;
}

function sampleValue(type: unknown, depth: number): unknown {
  if (Array.isArray(type)) return sample(type, depth + 1);
  if (typeof type === 'object' && type !== null && 'array' in type) {
    return [
      sampleValue((type as { array: unknown }).array, depth),
      sampleValue((type as { array: unknown }).array, depth),
    ];
  }
  switch (type) {
    case 'int8':
      return 3;
    case 'int16':
      return 300;
    case 'int32':
      return 70000;
    case 'int64':
      return 1n << 40n;
    case 'bool':
      return true;
    case 'string':
      return `s${depth}é`;
    case 'uuid':
      return Buffer.alloc(16, 7);
    default:
      return Buffer.from([depth, 1, 2]);
  }
}

describe('every API in every version served', () => {
  const cases = API_SPECS.flatMap((api) =>
    Array.from(
      { length: api.maxVersion - api.minVersion + 1 },
      (_, index) => [api.name, api.minVersion + index, api] as const,
    ),
  );

  it.each(cases)('%s v%d: request and response round-trip', (_name, version, api) => {
    const header = { apiKey: api.key, apiVersion: version, correlationId: 9, clientId: 'c' };
    const body = sample(api.request);
    const request = decodeRequest(encodeRequest(api, header, body).subarray(4));
    expect(request.header).toEqual(header);
    const again = decodeRequest(encodeRequest(api, header, request.body).subarray(4));
    expect(again.body).toEqual(request.body);
    const response = encodeResponse(api, version, 9, sample(api.response));
    const decoded = decodeResponse(api, version, response.subarray(4));
    expect(decoded.correlationId).toBe(9);
    expect(encodeResponse(api, version, 9, decoded.body)).toEqual(response);
  });
});

describe('flexible versions', () => {
  it('reads an ApiVersions v3 request as librdkafka sends it: header v2, compact strings, tagged fields', () => {
    // size-less frame: key 18, version 3, correlation 1, client id "rdkafka" (int16 length), no header tags,
    // then compact "librdkafka" and "2.0.2" and no body tags.
    const frameBody = Buffer.concat([
      Buffer.from([0, 18, 0, 3, 0, 0, 0, 1, 0, 7]),
      Buffer.from('rdkafka'),
      Buffer.from([0, 11]),
      Buffer.from('librdkafka'),
      Buffer.from([6]),
      Buffer.from('2.0.2'),
      Buffer.from([0]),
    ]);
    const decoded = decodeRequest(frameBody);
    expect(decoded.header.clientId).toBe('rdkafka');
    expect(decoded.body).toEqual({ clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' });
  });

  it('keeps the ApiVersions v3 response header at v0 and ends its body with tagged fields', () => {
    const api = spec(ApiKey.ApiVersions);
    expect(isFlexible(api, 3)).toBe(true);
    const encoded = encodeResponse(api, 3, 5, {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }],
      throttleTimeMs: 0,
    });
    // size, correlation id, error code, compact array of 1 (2), the entry and its empty tags, throttle, empty tags.
    expect([...encoded.subarray(4)]).toEqual([0, 0, 0, 5, 0, 0, 2, 0, 18, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0]);
  });

  it('decodes known tagged fields, skips unknown ones and writes a tagged field only when it differs from its default', () => {
    const fields = [
      {
        name: 'a',
        type: 'int32' as const,
        versions: { min: 0, max: undefined },
        nullable: undefined,
        default: undefined,
        tag: undefined,
      },
      {
        name: 't',
        type: 'string' as const,
        versions: { min: 0, max: undefined },
        nullable: undefined,
        default: '',
        tag: 1,
      },
    ];
    const context = { version: 0, flexible: true };
    const writer = new ByteWriter();
    writeStruct(writer, fields, { a: 5, t: '' }, context);
    expect([...writer.finish()]).toEqual([0, 0, 0, 5, 0]);
    const tagged = new ByteWriter();
    writeStruct(tagged, fields, { a: 5, t: 'x' }, context);
    const bytes = tagged.finish();
    expect(readStruct(new ByteReader(bytes), fields, context)).toEqual({ a: 5, t: 'x' });
    // An unknown tag (0) before the known one is skipped; tags out of order are refused.
    const unknown = Buffer.from([0, 0, 0, 5, 2, 0, 1, 9, 1, 2, 2, 0x78]);
    expect(readStruct(new ByteReader(unknown), fields, context)).toEqual({ a: 5, t: 'x' });
    const disordered = Buffer.from([0, 0, 0, 5, 2, 1, 2, 2, 0x78, 0, 1, 9]);
    expect(() => readStruct(new ByteReader(disordered), fields, context)).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_BAD_LENGTH }),
    );
    const ordered = Buffer.from([0, 0, 0, 5, 2, 1, 2, 2, 0x78, 7, 1, 9]);
    expect(readStruct(new ByteReader(ordered), fields, context)).toEqual({ a: 5, t: 'x' });
  });
});

describe('Metadata v9-v12 (flexible, topic ids)', () => {
  const api = spec(ApiKey.Metadata);
  const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');

  it('serves v0-v12, flexible from v9', () => {
    expect(supportedApiVersions().find((entry) => entry.apiKey === ApiKey.Metadata)).toEqual({
      apiKey: ApiKey.Metadata,
      minVersion: 0,
      maxVersion: 12,
    });
    expect(isFlexible(api, 8)).toBe(false);
    expect(isFlexible(api, 9)).toBe(true);
  });

  it('reads a v12 request by topic id with a null name, byte by byte, as librdkafka sends it', () => {
    // key 3, version 12, correlation 7, client id "rd", no header tags; a compact array of one topic: its 16-byte
    // id, a null compact name (0), no tags; allow_auto_topic_creation false, include_topic_authorized_operations
    // false (v11+ has no cluster flag), no tags.
    const frameBody = Buffer.concat([
      Buffer.from([0, 3, 0, 12, 0, 0, 0, 7, 0, 2]),
      Buffer.from('rd'),
      Buffer.from([0, 2]),
      id,
      Buffer.from([0, 0, 0, 0, 0]),
    ]);
    const decoded = decodeRequest(frameBody);
    expect(decoded.body).toEqual({
      topics: [{ topicId: id, name: null }],
      allowAutoTopicCreation: false,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: false,
    });
  });

  it('reads a v9 request with compact strings, and v10 with the cluster flag v11 drops', () => {
    // v9: compact array of one, compact "t", tags; auto-create true, cluster ops true, topic ops false, tags.
    const v9 = Buffer.concat([Buffer.from([0, 3, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0, 2, 2, 0x74, 0, 1, 1, 0, 0])]);
    expect(decodeRequest(v9).body).toEqual({
      topics: [{ topicId: Buffer.alloc(16), name: 't' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: true,
      includeTopicAuthorizedOperations: false,
    });
    // v10 and v11 alike with a zero id; v10's three flags are one byte more than v11's two.
    const body = { topics: [{ topicId: Buffer.alloc(16), name: 't' }], allowAutoTopicCreation: true };
    const v10 = encodeRequest(api, { apiKey: 3, apiVersion: 10, correlationId: 1, clientId: null }, body);
    const v11 = encodeRequest(api, { apiKey: 3, apiVersion: 11, correlationId: 1, clientId: null }, body);
    expect(v10.length - v11.length).toBe(1);
    expect(decodeRequest(v11.subarray(4)).body['topics']).toEqual([{ topicId: Buffer.alloc(16), name: 't' }]);
  });

  it('writes a v12 answer with a topic id, and an unknown id with a null name', () => {
    const answer = encodeResponse(api, 12, 7, {
      throttleTimeMs: 0,
      brokers: [],
      clusterId: null,
      controllerId: 1,
      topics: [
        { errorCode: 100, name: null, topicId: id, isInternal: false, partitions: [], topicAuthorizedOperations: 0 },
      ],
    });
    // size, correlation 7, header tags; throttle 0; brokers: empty compact array (1); null cluster id (0);
    // controller 1; topics: compact array of one (2): error 100, null name (0), the id, not internal, no
    // partitions (1), authorized operations 0, tags; no cluster operations in v12; tags.
    expect([...answer.subarray(4)]).toEqual([
      ...[0, 0, 0, 7, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 0, 100, 0],
      ...id,
      ...[0, 1, 0, 0, 0, 0, 0, 0],
    ]);
    const decoded = decodeResponse(api, 12, answer.subarray(4)).body;
    expect(decoded['topics']).toEqual([
      { errorCode: 100, name: null, topicId: id, isInternal: false, partitions: [], topicAuthorizedOperations: 0 },
    ]);
  });

  it('refuses a null topic name in a v10 answer (nullable from v12 only) and a null request name in v9', () => {
    const topics = [{ errorCode: 0, name: null, topicId: id, isInternal: false, partitions: [] }];
    expect(() => encodeResponse(api, 11, 1, { brokers: [], topics })).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_BAD_VALUE }),
    );
    // v9: compact array of one whose compact name is null (0).
    const v9 = Buffer.from([0, 3, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0, 2, 0, 0, 1, 0, 0, 0]);
    expect(() => decodeRequest(v9)).toThrow(expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_BAD_LENGTH }));
  });
});

describe('refusals', () => {
  it('fails an unknown API key and an unsupported version with their reasons', () => {
    expect(() => decodeRequest(Buffer.from([0, 99, 0, 0, 0, 0, 0, 1, 0, 0]))).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_UNKNOWN_API }),
    );
    expect(() => decodeRequest(Buffer.from([0, 18, 0, 9, 0, 0, 0, 1, 0, 0]))).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_UNSUPPORTED_VERSION }),
    );
  });

  it('fails an array count the remaining bytes cannot hold before allocating for it', () => {
    // Metadata v1: topics count 2^31-1 with 0 bytes after it.
    const frameBody = Buffer.from([0, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0x7f, 0xff, 0xff, 0xff]);
    expect(() => decodeRequest(frameBody)).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_TRUNCATED }),
    );
  });

  it("reads librdkafka's flexible Metadata for all topics, whose null topic count takes four bytes, as Kafka does", () => {
    // Header v2 (key 3, v12, correlation 7, client id "c", no tags), the int32 placeholder 0 librdkafka leaves as the
    // topic count, then what it meant: allowAutoTopicCreation true, includeTopicAuthorizedOperations false, no tags.
    const header = [0, 3, 0, 12, 0, 0, 0, 7, 0, 1, 0x63, 0];
    const decoded = decodeRequest(Buffer.from([...header, 0, 0, 0, 0, 1, 0, 0]));
    // Kafka reads the fields from the placeholder's zero bytes and leaves the rest unread; so does the codec.
    expect(decoded.header).toMatchObject({ apiKey: ApiKey.Metadata, apiVersion: 12, correlationId: 7 });
    expect(decoded.body).toMatchObject({ topics: null, allowAutoTopicCreation: false });
    // Only there: trailing bytes after a Metadata naming its topics are refused as before.
    const named = [...header, 2, ...Buffer.alloc(16), 2, 0x74, 0, 1, 0, 0];
    expect(decodeRequest(Buffer.from(named)).body['topics']).toEqual([{ topicId: Buffer.alloc(16), name: 't' }]);
    expect(() => decodeRequest(Buffer.from([...named, 0]))).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_TRAILING_BYTES }),
    );
  });

  it('fails trailing bytes after a request', () => {
    const api = spec(ApiKey.ListGroups);
    const encoded = encodeRequest(api, { apiKey: api.key, apiVersion: 1, correlationId: 1, clientId: null }, {});
    expect(() => decodeRequest(Buffer.concat([encoded.subarray(4), Buffer.from([1])]))).toThrow(
      expect.objectContaining({ reason: KafkaProtocolReason.KAFKA_TRAILING_BYTES }),
    );
  });
});
