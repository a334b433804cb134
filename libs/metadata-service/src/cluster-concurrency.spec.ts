import { managedLedgerPath, TopicName } from '@ledgerline/naming';
import { OwnerRole } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { eventually, sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { startClusterMetadataService } from './cluster.js';
import { resolveBalancerSettings, type ClusterConfig } from './config.js';
import { sleep } from './sleep.js';
import type { RunningMetadataService } from './metadata-server.js';
import { connectClients, testServiceConfig, type ServiceClients } from './testing/service-fixtures.js';
import { failure } from './testing/spec-support.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/** Races between two metadata instances over one Redis and one NATS. */
const ROUNDS = 8;
const LEASE_ROUNDS = 3;
/** The raced sessions' TTL: how long the holder's lease takes to lapse once its keep-alives stop. */
const LEASE_SESSION_TTL_MS = 3_000;

type Outcome = { ok: true; value: unknown } | { ok: false; error: LedgerlineError };

async function settle(call: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    return { ok: false, error: LedgerlineError.from(error) };
  }
}

/** One topic through CreateTopics, failing as CreateTopic would (with the per-topic reason). */
async function batchCreate(clients: ServiceClients, topic: string): Promise<unknown> {
  const result = (await clients.admin.createTopics({ topics: [topic] })).results[0]!;
  if (result.created) return result;
  const code = result.errorReason === 'TOPIC_EXISTS' ? 'ALREADY_EXISTS' : 'ABORTED';
  throw new LedgerlineError(code, result.errorReason, result.errorMessage);
}

function failures(outcomes: Outcome[]): LedgerlineError[] {
  return outcomes.flatMap((outcome) => (outcome.ok ? [] : [outcome.error]));
}

describe('two metadata instances over one Redis racing each other', () => {
  let instances: RunningMetadataService[];
  let a: ServiceClients;
  let b: ServiceClients;

  beforeAll(async () => {
    const { redisUrl, natsUrl } = sharedServers();
    const config: ClusterConfig = {
      ...testServiceConfig(),
      redisUrl,
      natsUrl,
      redisKeyPrefix: uniqueNamespace('metadata-race'),
      // The balancer has specs of its own; here two instances race over the store without it.
      ...resolveBalancerSettings({ balancerEnabled: false }),
      storeCheckIntervalMs: 1_000,
      storeCheckFailures: 2,
    };
    instances = await Promise.all([
      startClusterMetadataService(config, { signals: [], name: 'metadata-a' }),
      startClusterMetadataService(config, { signals: [], name: 'metadata-b' }),
    ]);
    [a, b] = instances.map((instance) => connectClients(`127.0.0.1:${instance.port}`)) as [
      ServiceClients,
      ServiceClients,
    ];
    await a.admin.createTenant({ tenant: 'race' });
  });
  afterAll(async () => {
    a.close();
    b.close();
    await Promise.all(instances.map((instance) => instance.shutdown('test finished')));
  });

  it('creates a topic raced from both instances exactly once', async () => {
    await a.admin.createNamespace({ namespace: 'race/same', policies: { numberOfTopicBuckets: 4 } });
    for (let round = 0; round < ROUNDS; round++) {
      const partitions = round % 2 === 0 ? 0 : 3;
      const topic = `race/same/t-${round}`;
      const outcomes = await Promise.all([
        settle(a.admin.createTopic({ topic, partitions })),
        settle(b.admin.createTopic({ topic, partitions })),
      ]);
      expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
      expect(failures(outcomes)).toEqual([expect.objectContaining({ code: 'ALREADY_EXISTS', reason: 'TOPIC_EXISTS' })]);
    }
    expect((await b.admin.countTopics({ namespace: 'race/same' })).count).toBe(BigInt((ROUNDS / 2) * (1 + 3)));
  });

  it('never lets a plain (single or batch) and a partitioned topic of one name both exist', async () => {
    await a.admin.createNamespace({ namespace: 'race/kinds', policies: { numberOfTopicBuckets: 2 } });
    for (let round = 0; round < ROUNDS; round++) {
      const topic = `race/kinds/k-${round}`;
      const create = async (clients: ServiceClients, partitions: number) => {
        // A create undone because of the race answers TOPIC_CREATE_CONFLICT: retry until decided.
        for (let attempt = 0; ; attempt++) {
          const outcome =
            partitions === 0 && round % 2 === 1
              ? await settle(batchCreate(clients, topic))
              : await settle(clients.admin.createTopic({ topic, partitions }));
          if (outcome.ok || outcome.error.reason !== MetadataServiceReason.TOPIC_CREATE_CONFLICT || attempt === 10)
            return outcome;
        }
      };
      const outcomes = await Promise.all([create(a, 0), create(b, 2)]);
      expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
      expect(failures(outcomes)).toEqual([expect.objectContaining({ code: 'ALREADY_EXISTS', reason: 'TOPIC_EXISTS' })]);
      const info = (await a.admin.getTopic({ topic })).topic!;
      const plain = await a.store.exists({ path: managedLedgerPath(TopicName.parse(topic), 2) });
      expect(plain.exists).toBe(info.partitions === 0);
    }
    const listed = (await b.admin.listTopics({ namespace: 'race/kinds' })).topics.length;
    expect((await b.admin.countTopics({ namespace: 'race/kinds' })).count).toBe(BigInt(listed));
  });

  it('holds maxTopics exactly across both instances, for plain, partitioned and batch creates', async () => {
    await a.admin.createNamespace({ namespace: 'race/limit', policies: { numberOfTopicBuckets: 8, maxTopics: 40 } });
    const calls = Array.from({ length: 60 }, (_, index) => {
      const clients = index % 2 === 0 ? a : b;
      if (index % 3 === 0) return settle(clients.admin.createTopic({ topic: `race/limit/p-${index}`, partitions: 3 }));
      if (index % 3 === 1) return settle(clients.admin.createTopic({ topic: `race/limit/t-${index}` }));
      return settle(clients.admin.createTopics({ topics: [`race/limit/b-${index}-0`, `race/limit/b-${index}-1`] }));
    });
    const outcomes = await Promise.all(calls);
    for (const error of failures(outcomes)) expect(error).toMatchObject({ reason: 'TOO_MANY_TOPICS' });
    let listed = 0;
    let pageToken = '';
    for (let page = 0; page < 50; page++) {
      const result = await b.admin.listTopics({ namespace: 'race/limit', pageToken, pageSize: 16 });
      listed += result.topics.length;
      pageToken = result.nextPageToken;
      if (pageToken === '') break;
    }
    expect(listed).toBe(40);
    expect((await a.admin.countTopics({ namespace: 'race/limit' })).count).toBe(40n);
  });

  it('leaves no topic behind in a namespace deleted while a topic was being created in it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const namespace = `race/gone-${round}`;
      await a.admin.createNamespace({ namespace, policies: { numberOfTopicBuckets: 2 } });
      const topic = `${namespace}/t`;
      const [deleted, created] = await Promise.all([
        settle(a.admin.deleteNamespace({ namespace })),
        settle(b.admin.createTopic({ topic, partitions: round % 2 })),
      ]);
      expect(deleted.ok !== created.ok).toBe(true);
      const path = managedLedgerPath(TopicName.parse(topic), 2);
      if (deleted.ok) {
        expect(created).toMatchObject({
          ok: false,
          error: { code: expect.stringMatching(/NOT_FOUND|FAILED_PRECONDITION/) },
        });
        expect((await b.store.exists({ path })).exists).toBe(false);
        expect((await b.store.exists({ path: `${path}-partition-0` })).exists).toBe(false);
        expect((await b.store.exists({ path: `/admin/topic-counts/${namespace}` })).exists).toBe(false);
        expect((await b.store.children({ path: `/admin/partitioned-topics/${namespace}` })).names).toEqual([]);
      } else {
        expect(deleted).toMatchObject({ ok: false, error: { reason: 'NAMESPACE_NOT_EMPTY' } });
        expect((await b.admin.getTopic({ topic })).topic?.name).toBe(`persistent://${topic}`);
        expect((await b.admin.countTopics({ namespace })).count).toBe(1n);
      }
    }
  });

  it('leaves no namespace behind in a tenant deleted while a namespace was being created in it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const tenant = `race-t-${round}`;
      await a.admin.createTenant({ tenant });
      const [deleted, created] = await Promise.all([
        settle(a.admin.deleteTenant({ tenant })),
        settle(b.admin.createNamespace({ namespace: `${tenant}/ns`, policies: { numberOfTopicBuckets: 2 } })),
      ]);
      expect(deleted.ok !== created.ok).toBe(true);
      if (deleted.ok) {
        expect(created).toMatchObject({ ok: false, error: { reason: 'TENANT_NOT_FOUND' } });
        expect((await b.store.children({ path: `/admin/namespaces/${tenant}` })).names).toEqual([]);
        expect((await b.store.exists({ path: `/admin/topic-counts/${tenant}/ns` })).exists).toBe(false);
        expect((await b.admin.listTenants({})).tenants).not.toContain(tenant);
      } else {
        expect(deleted).toMatchObject({ ok: false, error: { reason: 'TENANT_NOT_EMPTY' } });
        expect((await b.admin.getNamespace({ namespace: `${tenant}/ns` })).namespace?.name).toBe(`${tenant}/ns`);
      }
    }
  });

  it('never leaves a reader namespace mirroring a writer namespace deleted at the same time', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const writer = `race/w-${round}`;
      const reader = `race/r-${round}`;
      await a.admin.createNamespace({ namespace: writer });
      await b.admin.createNamespace({ namespace: reader, policies: { ownerGroup: 'readers' } });
      // The writer is checked late in setWriterNamespace: start the delete a little later each round.
      const [mirrored, deleted] = await Promise.all([
        settle(b.admin.setWriterNamespace({ namespace: reader, writerNamespace: writer })),
        sleep(round).then(() => settle(a.admin.deleteNamespace({ namespace: writer }))),
      ]);
      expect(deleted.ok && mirrored.ok).toBe(false);
      const policies = (await a.admin.getNamespace({ namespace: reader })).namespace!.policies!;
      // Both may refuse when each saw the other (a retry resolves that); neither may be left half done.
      expect(policies.writerNamespace ?? '').toBe(mirrored.ok ? writer : '');
      if (deleted.ok) {
        expect(await failure(b.admin.getNamespace({ namespace: writer }))).toMatchObject({
          reason: 'NAMESPACE_NOT_FOUND',
        });
      } else {
        expect((await b.admin.getNamespace({ namespace: writer })).namespace?.name).toBe(writer);
      }
    }
  });

  it('gives a raced lease to exactly one session, and to the other once the holder lapses', async () => {
    await a.admin.createNamespace({ namespace: 'race/own', policies: { ownerGroup: 'racers' } });
    const owner = (instanceId: string) => ({
      instanceId,
      role: OwnerRole.WRITER,
      group: 'racers',
      advertisedAddress: `${instanceId}:6650`,
    });
    for (let round = 0; round < LEASE_ROUNDS; round++) {
      const topic = `race/own/l-${round}`;
      await a.admin.createTopic({ topic });
      const sessions = await Promise.all([
        a.lookup.registerOwner({ owner: owner(`a-${round}`), sessionTtlMs: BigInt(LEASE_SESSION_TTL_MS) }),
        b.lookup.registerOwner({ owner: owner(`b-${round}`), sessionTtlMs: BigInt(LEASE_SESSION_TTL_MS) }),
      ]);
      // Both sessions are kept alive from their registration, as an owner keeps its own: with keep-alives only
      // after the race, a loaded machine (load average 21) let the loser's lapse before its first one.
      const alive = new Set(sessions.map((session) => session.sessionId));
      const keepingAlive = setInterval(() => {
        for (const sessionId of alive) a.lookup.keepAliveOwner({ sessionId }).catch(() => undefined);
      }, LEASE_SESSION_TTL_MS / 6);
      try {
        const outcomes = await Promise.all([
          settle(a.lookup.acquireLease({ topic, sessionId: sessions[0].sessionId })),
          settle(b.lookup.acquireLease({ topic, sessionId: sessions[1].sessionId })),
        ]);
        expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(1);
        expect(failures(outcomes)).toEqual([expect.objectContaining({ reason: 'LEASE_HELD' })]);
        const holder = (await b.lookup.getLease({ topic })).lease!;
        const winner = outcomes[0]!.ok ? 0 : 1;
        expect(holder.instanceId).toBe(`${winner === 0 ? 'a' : 'b'}-${round}`);
        // Then only the loser's: the holder's session lapses, and its lease with it.
        alive.delete(sessions[winner]!.sessionId);
        const loser = sessions[1 - winner]!.sessionId;
        await eventually(async () => (await a.lookup.getLease({ topic })).lease === undefined, {
          // Its TTL and the sweep that notices it, stretched by a loaded machine: bounded at 30 s.
          attempts: 1_500,
          description: "the holder's lease to lapse",
        });
        const takeover = (await b.lookup.acquireLease({ topic, sessionId: loser })).lease!;
        expect(takeover.instanceId).toBe(`${winner === 0 ? 'b' : 'a'}-${round}`);
        expect(takeover.version).toBeGreaterThan(holder.version);
        expect(await b.lookup.lookupTopic({ topic })).toMatchObject({ instanceId: takeover.instanceId, owned: true });
      } finally {
        clearInterval(keepingAlive);
      }
    }
  });
});
