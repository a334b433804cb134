// Dispatch cost of the consume lib alone, with no transport and no store: how
// many messages per second a subscription delivers and settles per type,
// against an in-memory source, with consumers that ack and re-grant permits
// every 100 messages as a client's receiver queue does.
// Run: npx tsx bench/subscriptions-dispatch.ts [--full]   (also part of `npm run bench`)
import { Subscription, SubscriptionType, type Delivery } from '@ledgerline/subscriptions';
import { InMemorySource, type TestEntry } from '@ledgerline/subscriptions/testing';
import { runAlone, sized, type BenchReport } from './bench-report.js';

const ENTRIES = sized({ quick: 50_000, normal: 100_000, full: 1_000_000 });
/** Keys for Key_Shared: many, as in the "thousands of keys". */
const KEYS = 10_000;
/** Permits a consumer grants at start and the batch it acks and re-grants, like a receiver queue. */
const RECEIVER_QUEUE = 1_000;
const ACK_BATCH = 100;
/** The whole run for one case is bounded. */
const MAX_RUN_MS = 120_000;

interface Case {
  label: string;
  type: SubscriptionType;
  consumers: number;
  keyed: boolean;
}

const CASES: Case[] = [
  { label: 'Exclusive, 1 consumer', type: SubscriptionType.EXCLUSIVE, consumers: 1, keyed: false },
  { label: 'Failover, 2 consumers', type: SubscriptionType.FAILOVER, consumers: 2, keyed: false },
  { label: 'Shared, 4 consumers', type: SubscriptionType.SHARED, consumers: 4, keyed: false },
  { label: `Key_Shared, 4 consumers, ${KEYS} keys`, type: SubscriptionType.KEY_SHARED, consumers: 4, keyed: true },
];

async function measureCase(c: Case): Promise<Record<string, string | number>> {
  const source = new InMemorySource();
  for (let i = 0; i < ENTRIES; i++) source.append(c.keyed ? `key-${i % KEYS}` : undefined);
  const subscription = new Subscription<TestEntry>({ name: 'bench', source });
  let settled = 0;
  let done!: () => void;
  let fail!: (error: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  for (let n = 0; n < c.consumers; n++) {
    const toAck: TestEntry['position'][] = [];
    let flushScheduled = false;
    const flush = () => {
      flushScheduled = false;
      const positions = toAck.splice(0, toAck.length);
      if (positions.length === 0) return;
      consumer.acknowledge({ positions }).then(
        () => {
          settled += positions.length;
          if (settled >= ENTRIES) done();
          else consumer.flow(positions.length);
        },
        (error: unknown) => fail(error),
      );
    };
    const consumer = subscription.addConsumer({
      name: `consumer-${n}`,
      type: c.type,
      sink: {
        deliver(d: Delivery<TestEntry>) {
          toAck.push(d.entry.position);
          if (toAck.length >= ACK_BATCH) flush();
          else if (!flushScheduled) {
            // A partial batch is acked once the current burst of deliveries is over, as a client's ack timer would.
            flushScheduled = true;
            setImmediate(flush);
          }
        },
        activeChanged: () => undefined,
        close: () => undefined,
      },
    });
    consumer.flow(RECEIVER_QUEUE);
  }
  const start = process.hrtime.bigint();
  const timeout = setTimeout(() => done(), MAX_RUN_MS);
  await finished;
  clearTimeout(timeout);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await subscription.close();
  return {
    case: c.label,
    'messages settled': settled,
    'messages/s': Math.round(settled / seconds),
    'entries read': source.newEntriesRead,
    'entries read again': source.positionsReread,
  };
}

export async function run(): Promise<BenchReport> {
  // One untimed pass, so that the figures are for optimised code.
  await measureCase({ ...CASES[0]!, label: 'warm-up' });
  const rows = [];
  for (const c of CASES) rows.push(await measureCase(c));
  return {
    section: 'Dispatch (consume lib alone)',
    setup: `${ENTRIES} single-message entries per subscription type, in-memory source, no transport; consumers ack and re-grant every ${ACK_BATCH}`,
    tables: [{ title: 'messages delivered and settled per second', rows }],
    comparisons: [],
  };
}

runAlone(module, run);
