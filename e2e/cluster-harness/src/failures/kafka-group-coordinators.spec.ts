import { coordinatorAmong } from '@ledgerline/kafka-gateway';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { LocalCluster, type ServiceInstance } from '@ledgerline/cluster';
import { ClusterClients } from '../index.js';

/*
 * One consumer group over two Kafka gateways: each member bootstraps from a
 * different gateway, and both find the one coordinator rendezvous hashing
 * picks among the gateways registered with the metadata service (so they
 * share the partitions instead of each forming a group of its own). When the
 * coordinator is SIGKILLed its session ends and the other gateway takes the
 * group; when it comes back the group moves back, its members told
 * NOT_COORDINATOR; when it is stopped with SIGTERM it sends both members to
 * the other gateway before it closes, and neither consumer gives up. Every
 * message produced is consumed throughout.
 */

const TENANT_NAMESPACE = 'coordinators/ns';
const KAFKA_TOPIC = 'spread';
const PARTITIONS = 4;
const GROUP = 'spread-readers';
const BATCH = 100;
const WAIT_MS = 60_000;

/** kafkajs's retry budget here: enough for a coordinator to move (about 4 s), short enough to end within RETRIES_END_MS. */
const RETRY = { retries: 10, initialRetryTime: 100, maxRetryTime: 1_000 };
/** Bounds the wait, after the last test, for kafkajs's retry chains to end (10 retries at most 1 s apart, with jitter, on a quiet machine). */
const RETRIES_END_MS = 60_000;

/** The process's pending timers: Node's own count, which sees kafkajs's retry timers as it sees ours. */
function pendingTimers(): number {
  return process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
}

async function until(what: string, done: () => boolean | Promise<boolean>, seen = () => ''): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last seen: ${seen()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('consumer group coordinators over several Kafka gateways', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  const consumers: Consumer[] = [];
  const producers: Producer[] = [];

  /** The timers pending before this file started any: kafkajs's retries have ended once the count is back to it. */
  let timersBefore = 0;

  beforeAll(async () => {
    timersBefore = pendingTimers();
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1, 'kafka-gateway': 2 },
      settings: {
        metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '500' },
        'kafka-gateway': {
          LEDGERLINE_KAFKA_TENANT: 'coordinators',
          LEDGERLINE_KAFKA_NAMESPACE: 'ns',
          LEDGERLINE_KAFKA_CREATE_NAMESPACE: 'false',
          LEDGERLINE_KAFKA_GATEWAY_SESSION_TTL_MS: '3000',
          LEDGERLINE_KAFKA_GATEWAY_REFRESH_MS: '200',
          LEDGERLINE_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        },
      },
    });
    clients = new ClusterClients(cluster);
    await clients.createRetainedNamespace(TENANT_NAMESPACE);
    await clients.admin.createTopic({
      topic: `persistent://${TENANT_NAMESPACE}/${KAFKA_TOPIC}`,
      partitions: PARTITIONS,
    });
  }, 180_000);

  afterAll(async () => {
    for (const consumer of consumers) await consumer.disconnect().catch(() => undefined);
    for (const producer of producers) await producer.disconnect().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
    // kafkajs does not cancel a retry it scheduled before disconnect (a member whose gateway was killed): each
    // fires, fails on the closed client and may schedule the next, up to its retry budget. Waited out by watching
    // the pending timers, not for a guessed time (a loaded machine stretches the chain).
    for (const deadline = Date.now() + RETRIES_END_MS; pendingTimers() > timersBefore && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 100));
  }, 120_000);

  function kafkaAt(gateway: ServiceInstance, clientId: string): Kafka {
    return new Kafka({
      clientId,
      brokers: [gateway.kafkaAddress!],
      logLevel: logLevel.NOTHING,
      retry: RETRY,
    });
  }

  async function produce(gateway: ServiceInstance, values: string[]): Promise<void> {
    const producer = kafkaAt(gateway, `producer-${producers.length}`).producer();
    producers.push(producer);
    await producer.connect();
    await producer.send({ topic: KAFKA_TOPIC, messages: values.map((value, index) => ({ key: `k${index}`, value })) });
  }

  it('gives a group one coordinator, which moves when it dies and moves back when it returns', async () => {
    const gateways = cluster.byRole('kafka-gateway');
    // Each gateway sees the other before any member joins (Metadata lists every live gateway as a broker).
    for (const gateway of gateways) {
      const admin = kafkaAt(gateway, 'admin').admin();
      await admin.connect();
      try {
        await until('the gateways to see each other', async () => (await admin.describeCluster()).brokers.length === 2);
      } finally {
        await admin.disconnect();
      }
    }
    const brokers = gateways.map((gateway, index) => ({
      nodeId: index + 1,
      host: '127.0.0.1',
      port: gateway.kafkaPort!,
    }));
    const coordinator = gateways[brokers.indexOf(coordinatorAmong(brokers, GROUP)!)]!;
    const survivor = gateways.find((gateway) => gateway !== coordinator)!;

    const consumed = new Set<string>();
    /** Members' consumers that gave up after their retries and restarted (kafkajs's CRASH event). */
    let crashes = 0;
    const assignments = new Map<number, number[]>();
    for (const [index, gateway] of gateways.entries()) {
      const consumer = kafkaAt(gateway, `member-${index}`).consumer({
        groupId: GROUP,
        sessionTimeout: 10_000,
        heartbeatInterval: 300,
        maxWaitTimeInMs: 200,
      });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (event) =>
        assignments.set(index, event.payload.memberAssignment[KAFKA_TOPIC] ?? []),
      );
      consumer.on(consumer.events.CRASH, () => crashes++);
      await consumer.connect();
      await consumer.subscribe({ topic: KAFKA_TOPIC, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void consumed.add(message.value!.toString()) });
    }
    // One group of two members sharing the partitions: a group per gateway would give each member all four.
    await until('both members to share the partitions', () => {
      const all = [...assignments.values()].flat();
      return assignments.size === 2 && all.length === PARTITIONS && new Set(all).size === PARTITIONS;
    });

    const produced: string[] = [];
    const round = async (gateway: ServiceInstance, name: string): Promise<void> => {
      const values = Array.from({ length: BATCH }, (_, index) => `${name}-${index}`);
      produced.push(...values);
      await produce(gateway, values);
      await until(`the ${name} messages to be consumed`, () => produced.every((value) => consumed.has(value)));
    };
    await round(coordinator, 'before');

    const killedAtMs = Date.now();
    expect(await coordinator.stop('SIGKILL')).toBe(true);
    await round(survivor, 'after-kill');
    // The member that bootstrapped from the killed gateway may be gone with it (a client that restarts knows only
    // its bootstrap address): the group is stable on the survivor with whoever is left, and nothing was missed.
    await groupSettles(survivor, 1);
    const movedMs = Date.now() - killedAtMs;

    await coordinator.start(60_000);
    const restartedAtMs = Date.now();
    await round(coordinator, 'after-restart');
    await groupSettles(coordinator, 2);
    const backMs = Date.now() - restartedAtMs;

    // A SIGTERM hands the clients over while the gateway still answers (GatewayContext.leave): the member that
    // bootstrapped from it moves with the other, where a closed port left its consumer retrying until it crashed.
    const crashesBefore = crashes;
    const termAtMs = Date.now();
    expect(await coordinator.stop('SIGTERM')).toBe(true);
    await round(survivor, 'after-term');
    await groupSettles(survivor, 2);
    expect(crashes).toBe(crashesBefore);
    console.log(
      `group coordinators: ${produced.length} produced, ${consumed.size} consumed; coordinator SIGKILLed, ` +
        `group stable on the other gateway ${movedMs} ms later; back on the restarted one within ${backMs} ms; ` +
        `SIGTERMed, both members stable on the other gateway ${Date.now() - termAtMs} ms later`,
    );
  }, 240_000);

  /** The group is Stable with at least `members`, as its coordinator now tells (kafkajs asks the coordinator). */
  async function groupSettles(gateway: ServiceInstance, members: number): Promise<void> {
    const admin = kafkaAt(gateway, 'describer').admin();
    await admin.connect();
    let seen = '';
    try {
      await until(
        `the group to settle with ${members} member(s) or more (asked through ${gateway.name})`,
        async () => {
          const { groups } = await admin.describeGroups([GROUP]).catch((error: unknown) => {
            seen = String(error);
            return { groups: [] };
          });
          if (groups[0] !== undefined)
            seen = JSON.stringify({ state: groups[0].state, members: groups[0].members.length });
          return groups[0]?.state === 'Stable' && groups[0].members.length >= members;
        },
        () => seen,
      );
    } finally {
      await admin.disconnect();
    }
  }
});
