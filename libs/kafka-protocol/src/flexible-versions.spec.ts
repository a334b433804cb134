import {
  ApiKey,
  apiSpec,
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  type Message,
} from './index.js';

// Fetch v12-v17 and the group APIs' flexible versions (JoinGroup v6-v8, SyncGroup v4-v5, Heartbeat v4,
// LeaveGroup v4-v5), byte by byte: each layout below is written out from Kafka's message specs
// (Fetch, JoinGroup, SyncGroup, Heartbeat and LeaveGroup{Request,Response}.json), field by field, and the codec
// must read it into the body given and write that body back into the same bytes.

const i8 = (value: number) => [value & 0xff];
const i16 = (value: number) => [(value >> 8) & 0xff, value & 0xff];
const i32 = (value: number) => [...Buffer.from(Int32Array.of(value).buffer).reverse()];
const i64 = (value: bigint) => [...Buffer.from(BigInt64Array.of(value).buffer).reverse()];
/** A compact string (length + 1 as an unsigned varint: every string here is short), or compact null (0). */
const compact = (text: string | null) => (text === null ? [0] : [text.length + 1, ...Buffer.from(text)]);
/** A compact array's count (count + 1), and an empty tagged-field section. */
const count = (n: number) => [n + 1];
const NO_TAGS = [0];

const TOPIC_ID = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');

/** A request frame body in header v2 (flexible versions): key, version, correlation 7, client id "c", no tags. */
function requestBytes(apiKey: number, version: number, body: number[]): Buffer {
  return Buffer.from([...i16(apiKey), ...i16(version), ...i32(7), ...i16(1), 0x63, ...NO_TAGS, ...body]);
}

/** Reads the bytes into `body` and writes `body` back into the same bytes. */
function expectRequest(apiKey: number, version: number, bytes: number[], body: Message): void {
  const frame = requestBytes(apiKey, version, bytes);
  const decoded = decodeRequest(frame);
  expect(decoded.header).toEqual({ apiKey, apiVersion: version, correlationId: 7, clientId: 'c' });
  expect(decoded.body).toEqual(body);
  expect(encodeRequest(decoded.spec, decoded.header, body).subarray(4)).toEqual(frame);
}

/** Writes `body` into the bytes (after response header v1: correlation 7, no tags) and reads them back. */
function expectResponse(apiKey: number, version: number, body: Message, bytes: number[]): void {
  const spec = apiSpec(apiKey)!;
  const frame = Buffer.from([...i32(7), ...NO_TAGS, ...bytes]);
  expect(encodeResponse(spec, version, 7, body).subarray(4)).toEqual(frame);
  expect(decodeResponse(spec, version, frame).body).toEqual(body);
}

/** One fetched partition as a consumer sends it from v12: partition 3 at offset 5, 1 MiB. */
const FETCH_PARTITION = {
  bytes: [...i32(3), ...i32(-1), ...i64(5n), ...i32(-1), ...i64(-1n), ...i32(1 << 20), ...NO_TAGS],
  body: {
    partitionIndex: 3,
    currentLeaderEpoch: -1,
    fetchOffset: 5n,
    lastFetchedEpoch: -1,
    logStartOffset: -1n,
    partitionMaxBytes: 1 << 20,
  },
};

/** The fields before the topics: max wait 500, min bytes 1, max bytes 50 MiB, read uncommitted, no session. */
const FETCH_HEAD = [...i32(500), ...i32(1), ...i32(50 << 20), ...i8(0), ...i32(0), ...i32(-1)];
const FETCH_HEAD_BODY = {
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 50 << 20,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
};

describe('Fetch v12-v17', () => {
  it('serves v4-v17, flexible from v12', () => {
    expect(apiSpec(ApiKey.Fetch)).toMatchObject({ minVersion: 4, maxVersion: 17, flexibleFrom: 12 });
  });

  it('reads a v12 request: compact names, the last fetched epoch, forgotten topics by name, the tagged cluster id', () => {
    const bytes = [
      ...i32(-1),
      ...FETCH_HEAD,
      ...count(1),
      ...compact('orders'),
      ...count(1),
      ...FETCH_PARTITION.bytes,
      ...NO_TAGS,
      ...count(1),
      ...compact('old'),
      ...count(1),
      ...i32(2),
      ...NO_TAGS,
      ...compact('rack-a'),
      // One tagged field: tag 0 (ClusterId), 4 bytes, the compact string "ldl".
      1,
      0,
      4,
      ...compact('ldl'),
    ];
    expectRequest(ApiKey.Fetch, 12, bytes, {
      clusterId: 'ldl',
      replicaId: -1,
      replicaState: null,
      ...FETCH_HEAD_BODY,
      topics: [{ name: 'orders', topicId: Buffer.alloc(16), partitions: [FETCH_PARTITION.body] }],
      forgotten: [{ name: 'old', topicId: Buffer.alloc(16), partitions: [2] }],
      rackId: 'rack-a',
    });
  });

  it.each([13, 14])(
    'reads a v%d request naming its topics, fetched and forgotten, by id and not by name',
    (version) => {
      const bytes = [
        ...i32(-1),
        ...FETCH_HEAD,
        ...count(1),
        ...TOPIC_ID,
        ...count(1),
        ...FETCH_PARTITION.bytes,
        ...NO_TAGS,
        ...count(1),
        ...TOPIC_ID,
        ...count(1),
        ...i32(1),
        ...NO_TAGS,
        ...compact(''),
        ...NO_TAGS,
      ];
      expectRequest(ApiKey.Fetch, version, bytes, {
        clusterId: null,
        replicaId: -1,
        replicaState: null,
        ...FETCH_HEAD_BODY,
        topics: [{ name: '', topicId: TOPIC_ID, partitions: [FETCH_PARTITION.body] }],
        forgotten: [{ name: '', topicId: TOPIC_ID, partitions: [1] }],
        rackId: '',
      });
    },
  );

  it.each([15, 16, 17])('reads a v%d request without a replica id, and a follower tagged ReplicaState', (version) => {
    const topics = [...count(1), ...TOPIC_ID, ...count(1), ...FETCH_PARTITION.bytes, ...NO_TAGS];
    const tail = [...count(0), ...compact('')];
    const body = {
      clusterId: null,
      replicaId: -1,
      ...FETCH_HEAD_BODY,
      topics: [{ name: '', topicId: TOPIC_ID, partitions: [FETCH_PARTITION.body] }],
      forgotten: [],
      rackId: '',
    };
    // A consumer: no replica id at all from v15.
    expectRequest(ApiKey.Fetch, version, [...FETCH_HEAD, ...topics, ...tail, ...NO_TAGS], {
      ...body,
      replicaState: null,
    });
    // A follower: tag 1, 13 bytes: replica id 2, epoch 9, the struct's own empty tags.
    const replicaState = [1, 1, 13, ...i32(2), ...i64(9n), ...NO_TAGS];
    expectRequest(ApiKey.Fetch, version, [...FETCH_HEAD, ...topics, ...tail, ...replicaState], {
      ...body,
      replicaState: { replicaId: 2, replicaEpoch: 9n },
    });
  });

  it('skips a v17 follower tagged ReplicaDirectoryId, as it does any unknown tag', () => {
    const partition = [...FETCH_PARTITION.bytes.slice(0, -1), 1, 0, 16, ...TOPIC_ID];
    const frame = requestBytes(ApiKey.Fetch, 17, [
      ...FETCH_HEAD,
      ...[...count(1), ...TOPIC_ID, ...count(1), ...partition, ...NO_TAGS],
      ...[...count(0), ...compact(''), ...NO_TAGS],
    ]);
    const topics = decodeRequest(frame).body['topics'] as { partitions: unknown[] }[];
    expect(topics[0]!.partitions).toEqual([FETCH_PARTITION.body]);
  });

  /** One partition's answer, and its bytes: `records` empty, no aborted transactions (compact null). */
  function partitionAnswer(errorCode: number, tags: number[] = NO_TAGS, extra: Message = {}) {
    const bytes = [...i32(3), ...i16(errorCode), ...i64(8n), ...i64(8n), ...i64(-1n), 0, ...i32(-1), 1, ...tags];
    const body = {
      partitionIndex: 3,
      errorCode,
      highWatermark: 8n,
      lastStableOffset: 8n,
      logStartOffset: -1n,
      currentLeader: null,
      abortedTransactions: null,
      preferredReadReplica: -1,
      records: Buffer.alloc(0),
      ...extra,
    };
    return { bytes, body };
  }

  it('writes a v12 answer with compact names and tagged fields', () => {
    const partition = partitionAnswer(0);
    expectResponse(
      ApiKey.Fetch,
      12,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [{ topic: 'orders', topicId: Buffer.alloc(16), partitions: [partition.body] }],
        nodeEndpoints: null,
      },
      [...i32(0), ...i16(0), ...i32(0), ...count(1), ...compact('orders'), ...count(1)].concat(
        partition.bytes,
        NO_TAGS,
        NO_TAGS,
      ),
    );
  });

  it.each([13, 16])('writes a v%d answer by topic id: UNKNOWN_TOPIC_ID for an id no topic has', (version) => {
    const partition = partitionAnswer(100);
    const bytes = [...i32(0), ...i16(0), ...i32(0), ...count(1), ...TOPIC_ID, ...count(1)];
    expectResponse(
      ApiKey.Fetch,
      version,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [{ topic: '', topicId: TOPIC_ID, partitions: [partition.body] }],
        nodeEndpoints: null,
      },
      [...bytes, ...partition.bytes, ...NO_TAGS, ...NO_TAGS],
    );
  });

  it("writes a partition's tagged CurrentLeader (tag 1) and v16's tagged NodeEndpoints (tag 0) when given", () => {
    const leader = [1, 1, 9, ...i32(1), ...i32(0), ...NO_TAGS];
    const partition = partitionAnswer(6, leader, { currentLeader: { leaderId: 1, leaderEpoch: 0 } });
    const endpoint = [...i32(1), ...compact('gw'), ...i32(9092), ...compact(null), ...NO_TAGS];
    expectResponse(
      ApiKey.Fetch,
      16,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        sessionId: 0,
        responses: [{ topic: '', topicId: TOPIC_ID, partitions: [partition.body] }],
        nodeEndpoints: [{ nodeId: 1, host: 'gw', port: 9092, rack: null }],
      },
      [...i32(0), ...i16(0), ...i32(0), ...count(1), ...TOPIC_ID, ...count(1), ...partition.bytes, ...NO_TAGS].concat([
        1,
        0,
        1 + endpoint.length,
        ...count(1),
        ...endpoint,
      ]),
    );
  });
});

const PROTOCOL = { name: 'range', metadata: Buffer.from([0, 1]) };
const PROTOCOL_BYTES = [...count(1), ...compact('range'), 3, 0, 1, ...NO_TAGS];

describe('JoinGroup v6-v8', () => {
  it('serves v0-v8, flexible from v6', () => {
    expect(apiSpec(ApiKey.JoinGroup)).toMatchObject({ minVersion: 0, maxVersion: 8, flexibleFrom: 6 });
  });

  const head = [...compact('g'), ...i32(10_000), ...i32(30_000), ...compact('')];
  const headBody = { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, memberId: '' };

  it.each([6, 7])('reads a v%d request: compact strings and bytes, a null instance id', (version) => {
    const bytes = [...head, ...compact(null), ...compact('consumer'), ...PROTOCOL_BYTES, ...NO_TAGS];
    expectRequest(ApiKey.JoinGroup, version, bytes, {
      ...headBody,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [PROTOCOL],
      reason: null,
    });
  });

  it('reads a v8 request with its reason (KIP-800)', () => {
    const bytes = [...head, ...compact('i-1'), ...compact('consumer'), ...PROTOCOL_BYTES, ...compact('boot')];
    expectRequest(ApiKey.JoinGroup, 8, [...bytes, ...NO_TAGS], {
      ...headBody,
      groupInstanceId: 'i-1',
      protocolType: 'consumer',
      protocols: [PROTOCOL],
      reason: 'boot',
    });
  });

  it('writes a v6 MEMBER_ID_REQUIRED answer (no protocol type on the wire before v7)', () => {
    expectResponse(
      ApiKey.JoinGroup,
      6,
      {
        throttleTimeMs: 0,
        errorCode: 79,
        generationId: -1,
        protocolType: null,
        protocolName: '',
        leader: '',
        memberId: 'm-1',
        members: [],
      },
      [...i32(0), ...i16(79), ...i32(-1), ...compact(''), ...compact(''), ...compact('m-1'), ...count(0), ...NO_TAGS],
    );
  });

  it.each([7, 8])('writes a v%d answer with the protocol type, and null type and name in an error', (version) => {
    expectResponse(
      ApiKey.JoinGroup,
      version,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        generationId: 2,
        protocolType: 'consumer',
        protocolName: 'range',
        leader: 'm-1',
        memberId: 'm-1',
        members: [{ memberId: 'm-1', groupInstanceId: null, metadata: Buffer.from([0, 1]) }],
      },
      [...i32(0), ...i16(0), ...i32(2), ...compact('consumer'), ...compact('range'), ...compact('m-1')].concat(
        compact('m-1'),
        count(1),
        compact('m-1'),
        compact(null),
        [3, 0, 1],
        NO_TAGS,
        NO_TAGS,
      ),
    );
    expectResponse(
      ApiKey.JoinGroup,
      version,
      {
        throttleTimeMs: 0,
        errorCode: 79,
        generationId: -1,
        protocolType: null,
        protocolName: null,
        leader: '',
        memberId: 'm-2',
        members: [],
      },
      [...i32(0), ...i16(79), ...i32(-1), 0, 0, ...compact(''), ...compact('m-2'), ...count(0), ...NO_TAGS],
    );
  });
});

describe('SyncGroup v4-v5, Heartbeat v4, LeaveGroup v4-v5', () => {
  it('serves SyncGroup v0-v5, Heartbeat v0-v4 and LeaveGroup v0-v5, each flexible from v4', () => {
    expect(apiSpec(ApiKey.SyncGroup)).toMatchObject({ minVersion: 0, maxVersion: 5, flexibleFrom: 4 });
    expect(apiSpec(ApiKey.Heartbeat)).toMatchObject({ minVersion: 0, maxVersion: 4, flexibleFrom: 4 });
    expect(apiSpec(ApiKey.LeaveGroup)).toMatchObject({ minVersion: 0, maxVersion: 5, flexibleFrom: 4 });
  });

  const assignment = [...count(1), ...compact('m-1'), 2, 7, ...NO_TAGS];

  it('reads a v5 SyncGroup request with its protocol type and name, and v4 without them', () => {
    const head = [...compact('g'), ...i32(3), ...compact('m-1'), ...compact(null)];
    const body = {
      groupId: 'g',
      generationId: 3,
      memberId: 'm-1',
      groupInstanceId: null,
      assignments: [{ memberId: 'm-1', assignment: Buffer.from([7]) }],
    };
    expectRequest(ApiKey.SyncGroup, 5, [...head, ...compact('consumer'), ...compact('range'), ...assignment, 0], {
      ...body,
      protocolType: 'consumer',
      protocolName: 'range',
    });
    expectRequest(ApiKey.SyncGroup, 4, [...head, ...assignment, ...NO_TAGS], {
      ...body,
      protocolType: null,
      protocolName: null,
    });
  });

  it('writes a v5 SyncGroup answer with the protocol type and name', () => {
    expectResponse(
      ApiKey.SyncGroup,
      5,
      {
        throttleTimeMs: 0,
        errorCode: 0,
        protocolType: 'consumer',
        protocolName: 'range',
        assignment: Buffer.from([7]),
      },
      [...i32(0), ...i16(0), ...compact('consumer'), ...compact('range'), 2, 7, ...NO_TAGS],
    );
  });

  it('reads a v4 Heartbeat and writes its answer', () => {
    expectRequest(ApiKey.Heartbeat, 4, [...compact('g'), ...i32(3), ...compact('m-1'), ...compact('i'), 0], {
      groupId: 'g',
      generationId: 3,
      memberId: 'm-1',
      groupInstanceId: 'i',
    });
    expectResponse(ApiKey.Heartbeat, 4, { throttleTimeMs: 0, errorCode: 27 }, [...i32(0), ...i16(27), ...NO_TAGS]);
  });

  it('reads v4 and v5 LeaveGroup requests (v5 with a reason) and writes their answer', () => {
    const member = [...compact('m-1'), ...compact(null)];
    expectRequest(ApiKey.LeaveGroup, 4, [...compact('g'), ...count(1), ...member, ...NO_TAGS, ...NO_TAGS], {
      groupId: 'g',
      memberId: '',
      members: [{ memberId: 'm-1', groupInstanceId: null, reason: null }],
    });
    expectRequest(ApiKey.LeaveGroup, 5, [...compact('g'), ...count(1), ...member, ...compact('bye'), 0, 0], {
      groupId: 'g',
      memberId: '',
      members: [{ memberId: 'm-1', groupInstanceId: null, reason: 'bye' }],
    });
    expectResponse(
      ApiKey.LeaveGroup,
      5,
      { throttleTimeMs: 0, errorCode: 0, members: [{ memberId: 'm-1', groupInstanceId: null, errorCode: 25 }] },
      [...i32(0), ...i16(0), ...count(1), ...member, ...i16(25), ...NO_TAGS, ...NO_TAGS],
    );
  });
});
