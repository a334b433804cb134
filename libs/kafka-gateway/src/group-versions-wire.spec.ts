import { connect } from 'node:net';
import { ApiKey, apiSpec, encodeRequest, KafkaErrorCode, type Message } from '@ledgerline/kafka-protocol';
import { createLogger } from '@ledgerline/service-kit';
import { resolveKafkaGatewaySettings } from './settings.js';
import { startKafkaGateway, type RunningKafkaGateway } from './start-gateway.js';
import { RawKafkaClient, type RawAnswer } from './testing/raw-kafka-client.js';

// The group APIs' newer versions over the wire (JoinGroup v4-v8, SyncGroup v5, Heartbeat v4, LeaveGroup v4-v5),
// and requests in versions not served or cut short. Group membership needs no metadata service, so the gateway
// here has none.

/** Every wait is bounded: a gateway that neither answers nor closes fails the test. */
const WAIT_MS = 5_000;

function answered(answer: RawAnswer): Message {
  if (answer === 'closed') throw new Error('the gateway closed the connection');
  return answer;
}

function joinBody(groupId: string, memberId: string, groupInstanceId: string | null = null): Message {
  return {
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId,
    groupInstanceId,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from([0, 1]) }],
    reason: null,
  };
}

/** Sends one frame as given (its size prefix included) and resolves once the gateway closed the connection. */
function sendRaw(port: number, frame: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(frame));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the gateway kept the connection open'));
    }, WAIT_MS);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('the group APIs in their flexible versions, over the wire', () => {
  let gateway: RunningKafkaGateway;
  const clients: RawKafkaClient[] = [];

  async function client(): Promise<RawKafkaClient> {
    const opened = await RawKafkaClient.open(gateway.port);
    clients.push(opened);
    return opened;
  }

  beforeAll(async () => {
    gateway = await startKafkaGateway({
      settings: resolveKafkaGatewaySettings({
        kafkaHost: '127.0.0.1',
        kafkaPort: 0,
        kafkaCreateNamespace: false,
        groupInitialRebalanceDelayMs: 0,
      }),
      metadataAddress: '127.0.0.1:1',
      logger: createLogger('kafka-gateway', { level: 'silent' }),
    });
  });

  afterAll(async () => {
    for (const opened of clients) opened.end();
    await gateway.close();
  });

  it.each([4, 5, 7, 8])(
    'JoinGroup v%d: MEMBER_ID_REQUIRED with an id, then joins with it; SyncGroup v5, Heartbeat v4, LeaveGroup v5',
    async (version) => {
      const raw = await client();
      const group = `wire-${version}`;
      const required = answered(await raw.request(ApiKey.JoinGroup, version, joinBody(group, '')));
      expect(required).toMatchObject({ errorCode: KafkaErrorCode.MEMBER_ID_REQUIRED, generationId: -1 });
      expect(required['protocolName']).toBe(version >= 7 ? null : '');
      const memberId = required['memberId'] as string;
      expect(memberId).not.toBe('');
      const joined = answered(await raw.request(ApiKey.JoinGroup, version, joinBody(group, memberId)));
      expect(joined).toMatchObject({
        errorCode: KafkaErrorCode.NONE,
        generationId: 1,
        memberId,
        leader: memberId,
        protocolType: version >= 7 ? 'consumer' : null,
        protocolName: 'range',
      });
      const sync = (protocolName: string) =>
        raw.request(ApiKey.SyncGroup, 5, {
          groupId: group,
          generationId: 1,
          memberId,
          groupInstanceId: null,
          protocolType: 'consumer',
          protocolName,
          assignments: [{ memberId, assignment: Buffer.from([9]) }],
        });
      expect(answered(await sync('roundrobin'))).toMatchObject({
        errorCode: KafkaErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        protocolType: null,
        protocolName: null,
      });
      expect(answered(await sync('range'))).toEqual({
        throttleTimeMs: 0,
        errorCode: KafkaErrorCode.NONE,
        protocolType: 'consumer',
        protocolName: 'range',
        assignment: Buffer.from([9]),
      });
      const beat = { groupId: group, generationId: 1, memberId, groupInstanceId: null };
      expect(answered(await raw.request(ApiKey.Heartbeat, 4, beat))).toMatchObject({ errorCode: KafkaErrorCode.NONE });
      const left = answered(
        await raw.request(ApiKey.LeaveGroup, 5, {
          groupId: group,
          members: [{ memberId, groupInstanceId: null, reason: 'done' }],
        }),
      );
      expect(left).toMatchObject({ errorCode: KafkaErrorCode.NONE, members: [{ memberId, errorCode: 0 }] });
    },
  );

  it('joins a member without an id at once in JoinGroup v3, and a static member in v5+', async () => {
    const raw = await client();
    const v3 = answered(await raw.request(ApiKey.JoinGroup, 3, joinBody('wire-v3', '')));
    expect(v3).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1 });
    const staticMember = answered(await raw.request(ApiKey.JoinGroup, 7, joinBody('wire-static', '', 'i-1')));
    expect(staticMember).toMatchObject({ errorCode: KafkaErrorCode.NONE, generationId: 1, protocolType: 'consumer' });
  });

  it('advertises exactly the versions served in ApiVersions', async () => {
    const raw = await client();
    const versions = answered(
      await raw.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'spec', clientSoftwareVersion: '1' }),
    );
    const keys = versions['apiKeys'] as { apiKey: number; minVersion: number; maxVersion: number }[];
    const served = (apiKey: number) => keys.find((key) => key.apiKey === apiKey);
    expect(served(ApiKey.Fetch)).toEqual({ apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 17 });
    expect(served(ApiKey.JoinGroup)).toEqual({ apiKey: ApiKey.JoinGroup, minVersion: 0, maxVersion: 8 });
    expect(served(ApiKey.SyncGroup)).toEqual({ apiKey: ApiKey.SyncGroup, minVersion: 0, maxVersion: 5 });
    expect(served(ApiKey.Heartbeat)).toEqual({ apiKey: ApiKey.Heartbeat, minVersion: 0, maxVersion: 4 });
    expect(served(ApiKey.LeaveGroup)).toEqual({ apiKey: ApiKey.LeaveGroup, minVersion: 0, maxVersion: 5 });
    for (const key of keys) {
      expect([key.minVersion, key.maxVersion]).toEqual([
        apiSpec(key.apiKey)!.minVersion,
        apiSpec(key.apiKey)!.maxVersion,
      ]);
    }
  });

  it.each([
    ['JoinGroup v9', ApiKey.JoinGroup, 9],
    ['Fetch v18', ApiKey.Fetch, 18],
    ['Fetch v3', ApiKey.Fetch, 3],
  ])(
    'closes a connection that sends %s (not served), as a Kafka broker does, and serves the others',
    async (_what, key, version) => {
      const refused = await client();
      const body = key === ApiKey.JoinGroup ? joinBody('wire-refused', '') : { topics: [], forgotten: [] };
      expect(await refused.request(key, version, body)).toBe('closed');
      const other = await client();
      expect(
        answered(await other.request(ApiKey.Heartbeat, 4, { groupId: 'none', generationId: 1, memberId: 'm' })),
      ).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID });
    },
  );

  it.each([
    ['JoinGroup v8', ApiKey.JoinGroup, 8, joinBody('wire-cut', '')],
    ['SyncGroup v5', ApiKey.SyncGroup, 5, { groupId: 'g', generationId: 1, memberId: 'm', assignments: [] }],
    ['Fetch v13', ApiKey.Fetch, 13, { topics: [{ topicId: Buffer.alloc(16, 1), partitions: [{}] }], forgotten: [] }],
  ])('closes a connection whose %s request is cut short, and serves the others', async (_what, key, version, body) => {
    const whole = encodeRequest(
      apiSpec(key)!,
      { apiKey: key, apiVersion: version, correlationId: 1, clientId: 'c' },
      body,
    );
    // The whole request is served: the same bytes cut before their end are refused.
    const raw = await client();
    expect(await raw.request(key, version, body)).not.toBe('closed');
    for (const cut of [1, 5, 12]) {
      const frameBody = whole.subarray(4, whole.length - cut);
      const frame = Buffer.alloc(4 + frameBody.length);
      frame.writeInt32BE(frameBody.length, 0);
      frameBody.copy(frame, 4);
      await sendRaw(gateway.port, frame);
    }
    const other = await client();
    expect(
      answered(await other.request(ApiKey.Heartbeat, 4, { groupId: 'none', generationId: 1, memberId: 'm' })),
    ).toMatchObject({ errorCode: KafkaErrorCode.UNKNOWN_MEMBER_ID });
  });
});
