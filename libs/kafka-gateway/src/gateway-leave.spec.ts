import { ApiKey, apiSpec, KafkaErrorCode, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { createLogger } from '@ledgerline/service-kit';
import { GatewayContext } from './gateway-context.js';
import type { AdvertisedBroker, RegisteredPeers } from './gateway-peers.js';
import { GroupCoordinator } from './group-coordinator.js';
import { API_HANDLERS } from './handlers/index.js';
import type { LedgerlineBackend } from './ledgerline-backend.js';
import { ANONYMOUS } from './owner-router.js';
import { newSession, type Session } from './session.js';
import { resolveKafkaGatewaySettings } from './settings.js';
import { FakeGatewayLookup, listedGateway, peersOver } from './testing/fake-gateway-lookup.js';
import { fetchRequest } from './testing/fetch-requests.js';
import { TopicNames } from './topic-names.js';
import { NO_TOPIC_ID } from './topic-summary.js';

// A gateway stopping with SIGTERM hands its clients to the other gateways while it still answers
// (GatewayContext.leave): a closed port left kafkajs retrying it until its retries ran out, its consumer restarting.

const SELF: AdvertisedBroker = { nodeId: 1, host: 'gateway-1', port: 9092 };
const OTHER: AdvertisedBroker = { nodeId: 2, host: 'gateway-2', port: 9092 };

async function startedPeers(others: AdvertisedBroker[], onChange = () => {}) {
  const lookup = new FakeGatewayLookup(SELF);
  lookup.others = others.map(listedGateway);
  const peers = peersOver(lookup, SELF, onChange);
  await peers.start().listed;
  return { peers, lookup };
}

/**
 * A backend with one unpartitioned topic, `orders`, whose reads find nothing and, asked to wait, wait until cut
 * short (as an owner's long poll does); it stores nothing.
 */
function waitingBackend() {
  const backend = {
    reads: 0,
    async topic(name: string) {
      return { name, partitions: 0, topicId: NO_TOPIC_ID };
    },
    async partitions() {
      return 0;
    },
    fetch(_topic: string, request: { maxWaitMs: number }, _caller: unknown, signal?: AbortSignal) {
      backend.reads++;
      if (request.maxWaitMs === 0) return Promise.resolve({ entries: [], nextOffset: 0n });
      return new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('cut short')), { once: true });
      });
    },
  };
  return backend;
}

function contextOver(peers: RegisteredPeers, backend: object): GatewayContext {
  const settings = resolveKafkaGatewaySettings({});
  const context = new GatewayContext(
    settings,
    backend as LedgerlineBackend,
    new TopicNames({ tenant: 'public', namespace: 'default' }),
    new GroupCoordinator(settings),
    () => SELF,
    createLogger('gateway-leave-spec', { level: 'silent' }),
  );
  context.peers = peers;
  return context;
}

async function handle(
  context: GatewayContext,
  session: Session,
  apiKey: number,
  apiVersion: number,
  body: Message,
): Promise<Message> {
  const request: DecodedRequest = {
    header: { apiKey, apiVersion, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(apiKey)!,
    body,
  };
  return (await API_HANDLERS.get(apiKey)!(context, request, session))!;
}

/** The Fetch handler's answer to `fetchRequest([0])` (topic `orders`, partition 0, offset 0, waiting up to 20 s). */
async function fetchAnswer(context: GatewayContext, session: Session): Promise<Message> {
  return (await API_HANDLERS.get(ApiKey.Fetch)!(context, fetchRequest([0]), session))!;
}

function fetchErrors(answer: Message): number[] {
  return (answer['responses'] as { partitions: { errorCode: number; records: Buffer }[] }[]).flatMap((topic) =>
    topic.partitions.map((partition) => partition.errorCode),
  );
}

describe('a Kafka gateway that leaves', () => {
  it('stops being a broker, a leader and a coordinator, and ends its session, when another gateway is live', async () => {
    let changes = 0;
    const { peers, lookup } = await startedPeers([OTHER], () => changes++);
    try {
      expect(peers.brokers()).toEqual([SELF, OTHER]);
      expect(peers.leaderOf('orders-0')).toEqual(SELF);
      const before = changes;
      expect(await peers.leave()).toBe(true);
      expect(peers.leaving()).toBe(true);
      expect(peers.brokers()).toEqual([OTHER]);
      expect(peers.leaderOf('orders-0')).toEqual(OTHER);
      expect(peers.coordinatorOf('any-group')).toEqual(OTHER);
      // The host lets go of its groups at once; the others stop picking this gateway once its session is gone.
      expect(changes).toBe(before + 1);
      expect(lookup.unregistered).toBe(1);
    } finally {
      await peers.stop();
    }
  });

  it('stays what it was when it is the only gateway: nobody could take its clients', async () => {
    const { peers, lookup } = await startedPeers([]);
    try {
      expect(await peers.leave()).toBe(false);
      expect(peers.leaving()).toBe(false);
      expect(peers.brokers()).toEqual([SELF]);
      expect(peers.leaderOf('orders-0')).toEqual(SELF);
      expect(lookup.unregistered).toBe(0);
    } finally {
      await peers.stop();
    }
  });

  it('sends Metadata, Produce, Fetch and group requests to the other gateway', async () => {
    const { peers } = await startedPeers([OTHER]);
    const backend = waitingBackend();
    const context = contextOver(peers, backend);
    const session = newSession(ANONYMOUS, '127.0.0.1');
    try {
      expect(await context.leave()).toBe(true);
      const metadata = await handle(context, session, ApiKey.Metadata, 8, {
        topics: [{ name: 'orders' }],
        allowAutoTopicCreation: false,
        includeClusterAuthorizedOperations: false,
        includeTopicAuthorizedOperations: false,
      });
      expect(metadata['brokers']).toEqual([{ nodeId: 2, host: 'gateway-2', port: 9092, rack: null }]);
      expect(metadata['controllerId']).toBe(2);
      expect(metadata['topics']).toMatchObject([{ name: 'orders', partitions: [{ leaderId: 2, replicaNodes: [2] }] }]);

      // Nothing is stored: the backend has no publish, and would fail the call.
      const produce = await handle(context, session, ApiKey.Produce, 8, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 1_000,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, records: Buffer.alloc(0) }] }],
      });
      expect(produce['responses']).toMatchObject([
        { name: 'orders', partitions: [{ errorCode: KafkaErrorCode.NOT_LEADER_OR_FOLLOWER }] },
      ]);

      const fetch = await fetchAnswer(context, session);
      expect(fetchErrors(fetch)).toEqual([KafkaErrorCode.NOT_LEADER_OR_FOLLOWER]);
      expect(backend.reads).toBe(0);

      const heartbeat = await handle(context, session, ApiKey.Heartbeat, 3, {
        groupId: 'billing',
        generationId: 1,
        memberId: 'm-1',
        groupInstanceId: null,
      });
      expect(heartbeat['errorCode']).toBe(KafkaErrorCode.NOT_COORDINATOR);
    } finally {
      context.groups.close();
      await peers.stop();
    }
  });

  it('answers a Fetch waiting for entries at once when it starts to leave', async () => {
    const { peers } = await startedPeers([OTHER]);
    const backend = waitingBackend();
    const context = contextOver(peers, backend);
    try {
      // Waits (20 s asked) until an entry arrives: none will, so only the leave can answer it within the spec's 30 s.
      const waiting = fetchAnswer(context, newSession(ANONYMOUS, '127.0.0.1'));
      // The first read finds nothing; the second is the long poll.
      while (backend.reads < 2) await new Promise((resolve) => setImmediate(resolve));
      expect(await context.leave()).toBe(true);
      expect(fetchErrors(await waiting)).toEqual([KafkaErrorCode.NOT_LEADER_OR_FOLLOWER]);
    } finally {
      context.groups.close();
      await peers.stop();
    }
  });
});
