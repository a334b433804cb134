// A consumer group's coordinator moving between Kafka gateways (issue 42,
// item 5: "when a group's coordinator moves, members rejoin the new
// coordinator from the committed offsets without a session-timeout wait;
// measure the pause"). A local cluster (metadata, a writer owner, two
// gateways, each its own process on Redis and NATS); a kafkajs group of two
// members (both gateways as bootstrap brokers, kafkajs's default session and
// heartbeat) reads a 4-partition topic that a kafkajs producer writes at a
// steady rate, each value stamped with its send time. Then, in turn: the
// coordinator gateway is stopped with SIGTERM, started again (rendezvous
// hashing gives it the group back), and SIGKILLed. Per event: the longest
// gap between two consumed messages, the end-to-end latency of the messages
// sent in the 20 s after it (p50, p99, max), and the time until the group is
// Stable again with both members. At the end: messages lost (sent, acked,
// never consumed) and consumed more than once (rejoining resumes from the
// committed offsets, so some redelivery is expected and counted).
//
// Run: npx tsx bench/kafka-group-handover.ts [--rate 200]
import { coordinatorAmong } from '@ledgerline/kafka-gateway';
import { LocalCluster, type ServiceInstance } from '@ledgerline/cluster';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { loadavg } from 'node:os';
import { newHistogram, until } from './baselines.js';
import { flag, runAlone, type BenchReport } from './bench-report.js';

const RATE = flag('rate', 200);
const TOPIC = 'handover';
const PARTITIONS = 4;
const GROUP = 'handover-readers';
/** Messages sent this long after an event count towards its latency figures. */
const WINDOW_MS = 20_000;
const SETTLE_LIMIT_MS = 90_000;
const POLL_MS = 100;

interface Consumed {
  sentAtMs: number;
  receivedAtMs: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function run(): Promise<BenchReport> {
  const cluster = await LocalCluster.start({ counts: { metadata: 1, 'writer-owner': 1, 'kafka-gateway': 2 } });
  const gateways = cluster.byRole('kafka-gateway');
  const kafka = (clientId: string) =>
    new Kafka({
      clientId,
      brokers: gateways.map((gateway) => gateway.kafkaAddress!),
      logLevel: logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
  const consumers: Consumer[] = [];
  let producer: Producer | undefined;
  let producing = true;
  const consumed = new Map<string, Consumed[]>();
  const acked = new Set<string>();
  let lastReceivedMs = Date.now();
  const gaps: { atMs: number; gapMs: number }[] = [];
  try {
    const admin = kafka('admin').admin();
    await admin.connect();
    await until(
      async () => (await admin.describeCluster()).brokers.length === 2,
      60_000,
      'both gateways listed',
      POLL_MS,
    );
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
    await admin.disconnect();
    const brokers = gateways.map((gateway, index) => ({
      nodeId: index + 1,
      host: '127.0.0.1',
      port: gateway.kafkaPort!,
    }));
    const coordinator: ServiceInstance = gateways[brokers.indexOf(coordinatorAmong(brokers, GROUP)!)]!;

    const members = new Map<number, number>();
    for (let index = 0; index < 2; index++) {
      const consumer = kafka(`member-${index}`).consumer({ groupId: GROUP });
      consumers.push(consumer);
      consumer.on(consumer.events.GROUP_JOIN, (event) =>
        members.set(index, (event.payload.memberAssignment[TOPIC] ?? []).length),
      );
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const value = message.value!.toString();
          const nowMs = Date.now();
          const seen = consumed.get(value) ?? [];
          seen.push({ sentAtMs: Number(value.split(':')[1]), receivedAtMs: nowMs });
          consumed.set(value, seen);
          gaps.push({ atMs: nowMs, gapMs: nowMs - lastReceivedMs });
          lastReceivedMs = nowMs;
        },
      });
    }
    await until(
      () => [...members.values()].reduce((a, b) => a + b, 0) === PARTITIONS && members.size === 2,
      60_000,
      'two members sharing the partitions',
      POLL_MS,
    );

    producer = kafka('producer').producer();
    await producer.connect();
    let sequence = 0;
    const sending = (async () => {
      const intervalMs = 1_000 / RATE;
      let nextMs = Date.now();
      while (producing) {
        const value = `m${sequence++}:${Date.now()}`;
        producer!
          .send({ topic: TOPIC, messages: [{ key: value, value }] })
          .then(() => void acked.add(value))
          .catch(() => undefined);
        nextMs += intervalMs;
        await sleep(Math.max(0, nextMs - Date.now()));
      }
    })();
    await sleep(5_000);

    const stable = async (through: ServiceInstance, count: number) => {
      const describer = new Kafka({
        clientId: 'describer',
        brokers: [through.kafkaAddress!],
        logLevel: logLevel.NOTHING,
      }).admin();
      await describer.connect();
      try {
        const { groups } = await describer.describeGroups([GROUP]);
        return groups[0]?.state === 'Stable' && groups[0].members.length >= count;
      } catch {
        return false;
      } finally {
        await describer.disconnect().catch(() => undefined);
      }
    };
    const survivor = gateways.find((gateway) => gateway !== coordinator)!;
    const rows: Record<string, string | number>[] = [];
    const event = async (name: string, act: () => Promise<void>, askThrough: ServiceInstance) => {
      const atMs = Date.now();
      await act();
      await until(() => stable(askThrough, 2), SETTLE_LIMIT_MS, `${name}: group stable with 2 members`, POLL_MS);
      const stableMs = Date.now() - atMs;
      await sleep(Math.max(0, atMs + WINDOW_MS + 2_000 - Date.now()));
      // End to end in ms, into the benches' histogram (1 ms steps here: the clock stamped in the value is Date.now()).
      const latency = newHistogram();
      for (const seen of consumed.values()) {
        const first = seen[0]!;
        if (first.sentAtMs >= atMs - 1_000 && first.sentAtMs < atMs + WINDOW_MS)
          latency.recordValue(Math.max(1, first.receivedAtMs - first.sentAtMs));
      }
      const gap = Math.max(
        0,
        ...gaps.filter((each) => each.atMs >= atMs && each.atMs < atMs + WINDOW_MS).map((each) => each.gapMs),
      );
      rows.push({
        event: name,
        'longest gap between consumed ms': gap,
        'e2e p50 ms': latency.getValueAtPercentile(50),
        'e2e p99 ms': latency.getValueAtPercentile(99),
        'e2e max ms': latency.maxValue,
        'group stable again ms': stableMs,
        'load avg': Number(loadavg()[0]!.toFixed(2)),
      });
    };
    await event('coordinator SIGTERM', async () => void (await coordinator.stop('SIGTERM')), survivor);
    await event('coordinator back (a gateway joins and wins the group)', () => coordinator.start(60_000), coordinator);
    await event('coordinator SIGKILL', async () => void (await coordinator.stop('SIGKILL')), survivor);

    producing = false;
    await sending;
    // Bounded: what is still missing after it counts as lost.
    await until(
      () => [...acked].every((value) => consumed.has(value)),
      60_000,
      'every acked message consumed',
      POLL_MS,
    ).catch(() => 0);
    const lost = [...acked].filter((value) => !consumed.has(value)).length;
    const redelivered = [...consumed.values()].filter((seen) => seen.length > 1).length;
    return {
      section: 'Kafka: a consumer group whose coordinator moves',
      setup:
        `1 metadata instance, 1 writer owner, 2 Kafka gateways (each its own process, Redis and NATS, default settings); ` +
        `a kafkajs group of 2 members (both gateways as brokers, kafkajs's default session 30 s and heartbeat 3 s) on a ` +
        `${PARTITIONS}-partition topic written by a kafkajs producer at ${RATE} msg/s; per event, the messages sent in ` +
        `the ${WINDOW_MS / 1000} s after it; ${acked.size} acked in all, ${lost} lost, ${redelivered} consumed more than once`,
      tables: [{ title: 'coordinator moves', rows }],
      comparisons: [],
    };
  } finally {
    producing = false;
    for (const consumer of consumers) await consumer.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await cluster.stop();
  }
}

runAlone(module, run);
