import { createServer } from 'node:net';
import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { OwnerRole } from '@ledgerline/proto';
import { createLogger } from '@ledgerline/service-kit';
import { eventually } from '@ledgerline/testing';
import { GatewayContext } from './gateway-context.js';
import {
  coordinatorAmong,
  gatewayInstanceId,
  peerBroker,
  soloPeers,
  type AdvertisedBroker,
  type GatewayPeers,
} from './gateway-peers.js';
import { GroupCoordinator } from './group-coordinator.js';
import { API_HANDLERS } from './handlers/index.js';
import type { LedgerlineBackend } from './ledgerline-backend.js';
import { ANONYMOUS } from './owner-router.js';
import { newSession } from './session.js';
import { resolveKafkaGatewaySettings } from './settings.js';
import { FakeGatewayLookup, listedGateway, peersOver } from './testing/fake-gateway-lookup.js';
import { TopicNames } from './topic-names.js';

const SELF: AdvertisedBroker = { nodeId: 1, host: 'gateway-1', port: 9092 };
const OTHER: AdvertisedBroker = { nodeId: 2, host: 'gateway-2', port: 9092 };

function brokers(count: number): AdvertisedBroker[] {
  return Array.from({ length: count }, (_, index) => ({ nodeId: index + 1, host: `gateway-${index + 1}`, port: 9092 }));
}

describe('group coordinators over the live gateways', () => {
  it('names the broker id in the instance id, and reads it back from a registration', () => {
    const instanceId = gatewayInstanceId({ nodeId: 1234, host: '10.0.0.7', port: 9092 });
    expect(peerBroker({ instanceId, advertisedAddress: '10.0.0.7:9092' })).toEqual({
      nodeId: 1234,
      host: '10.0.0.7',
      port: 9092,
    });
    // Records no gateway wrote this way are skipped, not guessed at.
    expect(peerBroker({ instanceId: 'writer-1', advertisedAddress: '10.0.0.7:9092' })).toBeUndefined();
    expect(peerBroker({ instanceId, advertisedAddress: 'no-port' })).toBeUndefined();
  });

  it('spreads groups over the gateways, and a gateway that leaves moves only the groups it held', () => {
    const groups = Array.from({ length: 600 }, (_, index) => `group-${index}`);
    const three = brokers(3);
    const before = new Map(groups.map((group) => [group, coordinatorAmong(three, group)!.nodeId]));
    const perGateway = [1, 2, 3].map((nodeId) => [...before.values()].filter((held) => held === nodeId).length);
    for (const count of perGateway) expect(count).toBeGreaterThan(120);
    const withoutThird = three.slice(0, 2);
    for (const group of groups) {
      const after = coordinatorAmong(withoutThird, group)!.nodeId;
      if (before.get(group) !== 3) expect(after).toBe(before.get(group));
    }
    // Every gateway that sees the same peers, in whatever order, gives the same answer.
    expect(coordinatorAmong([...three].reverse(), 'group-7')).toEqual(coordinatorAmong(three, 'group-7'));
  });
});

function contextWith(peers: GatewayPeers): GatewayContext {
  const settings = resolveKafkaGatewaySettings({});
  const context = new GatewayContext(
    settings,
    {} as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    () => SELF,
    createLogger('gateway-peers-spec', { level: 'silent' }),
  );
  context.peers = peers;
  return context;
}

async function handle(context: GatewayContext, apiKey: number, apiVersion: number, body: Message): Promise<Message> {
  const request: DecodedRequest = {
    header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(apiKey)!,
    body,
  };
  return (await API_HANDLERS.get(apiKey)!(context, request, newSession(ANONYMOUS, '127.0.0.1')))!;
}

describe('group requests on a gateway that does not coordinate the group', () => {
  const elsewhere: GatewayPeers = {
    ...soloPeers(() => SELF),
    brokers: () => [SELF, OTHER],
    coordinatorOf: () => OTHER,
  };
  let context: GatewayContext;
  beforeEach(() => {
    context = contextWith(elsewhere);
  });
  afterEach(() => context.groups.close());

  it('points FindCoordinator at the coordinator and lists every gateway as a broker in Metadata', async () => {
    expect(await handle(context, ApiKey.FindCoordinator, 2, { key: 'billing', keyType: 0 })).toMatchObject({
      errorCode: KafkaErrorCode.NONE,
      nodeId: 2,
      host: 'gateway-2',
      port: 9092,
    });
    const metadata = await handle(context, ApiKey.Metadata, 8, { topics: [], allowAutoTopicCreation: false });
    expect((metadata['brokers'] as { nodeId: number }[]).map((broker) => broker.nodeId)).toEqual([1, 2]);
    // Transactions are refused, with a code clients take as final, so no gateway coordinates a transactional id.
    expect(await handle(context, ApiKey.FindCoordinator, 2, { key: 'tx', keyType: 1 })).toMatchObject({
      errorCode: KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      nodeId: -1,
    });
  });

  it('answers JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and DescribeGroups with NOT_COORDINATOR', async () => {
    const member = { groupId: 'billing', generationId: 1, memberId: 'm-1' };
    const join = await handle(context, ApiKey.JoinGroup, 5, {
      ...member,
      groupInstanceId: null,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 10_000,
      protocolType: 'consumer',
      protocols: [],
    });
    const sync = await handle(context, ApiKey.SyncGroup, 3, { ...member, groupInstanceId: null, assignments: [] });
    const heartbeat = await handle(context, ApiKey.Heartbeat, 3, { ...member, groupInstanceId: null });
    const leave = await handle(context, ApiKey.LeaveGroup, 3, {
      groupId: 'billing',
      members: [{ memberId: 'm-1', groupInstanceId: null }],
    });
    const commit = await handle(context, ApiKey.OffsetCommit, 7, {
      ...member,
      groupInstanceId: null,
      topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedMetadata: null }] }],
    });
    const described = await handle(context, ApiKey.DescribeGroups, 4, {
      groups: ['billing'],
      includeAuthorizedOperations: false,
    });
    expect([
      join['errorCode'],
      sync['errorCode'],
      heartbeat['errorCode'],
      leave['errorCode'],
      (commit['topics'] as { partitions: { errorCode: number }[] }[])[0]!.partitions[0]!.errorCode,
      (described['groups'] as { errorCode: number }[])[0]!.errorCode,
    ]).toEqual(Array.from({ length: 6 }, () => KafkaErrorCode.NOT_COORDINATOR));
    expect(context.groups.list()).toEqual([]);
  });
});

describe('gateways registered with the metadata service', () => {
  it('register as KAFKA_GATEWAY, see each other, and keep the last list while the service is out of reach', async () => {
    const lookup = new FakeGatewayLookup(SELF);
    let changes = 0;
    const peers = peersOver(lookup, SELF, () => changes++);
    lookup.others = [listedGateway(OTHER)];
    try {
      await peers.start().listed;
      expect(lookup.registered).toMatchObject([
        { instanceId: 'kafka-1-gateway-1:9092', role: OwnerRole.KAFKA_GATEWAY, group: 'kafka-gateways' },
      ]);
      expect(lookup.listRequests).toEqual([{ group: 'kafka-gateways', role: OwnerRole.KAFKA_GATEWAY }]);
      expect(peers.brokers()).toEqual([SELF, OTHER]);
      expect(changes).toBe(1);
      lookup.listFailures = 1;
      await (peers as unknown as { refresh(): Promise<void> }).refresh();
      expect(peers.brokers()).toEqual([SELF, OTHER]);
      lookup.others = [];
      await (peers as unknown as { refresh(): Promise<void> }).refresh();
      expect(peers.brokers()).toEqual([SELF]);
      expect(peers.coordinatorOf('any-group')).toEqual(SELF);
      expect(changes).toBe(2);
    } finally {
      await peers.stop();
    }
  });

  it('leave out at once a listed gateway whose port refuses connections', async () => {
    const server = createServer((socket) => sockets.add(socket));
    const sockets = new Set<import('node:net').Socket>();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const other: AdvertisedBroker = { nodeId: 2, host: '127.0.0.1', port };
    const lookup = new FakeGatewayLookup(SELF);
    lookup.others = [listedGateway(other)];
    let changes = 0;
    const peers = peersOver(lookup, SELF, () => changes++);
    const wait = { attempts: 200, intervalMs: 20 };
    try {
      await peers.start().listed;
      expect(peers.brokers()).toEqual([SELF, other]);
      await eventually(() => sockets.size === 1, { ...wait, description: 'the peer watched' });
      const group = Array.from({ length: 100 }, (_, i) => `g${i}`).find(
        (id) => coordinatorAmong([SELF, other], id) === other,
      )!;
      expect(peers.coordinatorOf(group)).toEqual(other);
      // The other gateway stops: its listener closes, then its connections.
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
      await eventually(() => peers.brokers().length === 1, { ...wait, description: 'the stopped gateway left out' });
      expect(peers.coordinatorOf(group)).toEqual(SELF);
      expect(changes).toBe(2);
    } finally {
      await peers.stop();
      server.close();
    }
  });
});
