import type { Entry } from '@ledgerline/proto';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { eventually } from '@ledgerline/testing';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

// Key_Shared through the gRPC service with thousands of keys while consumers
// join and leave. Every delivery is checked as it arrives against two rules
// (Pulsar's Key_Shared guarantees):
//   - a key is never delivered to a consumer while another consumer holds
//     unacknowledged messages of that key;
//   - per key, messages come in publish order: a message is new only when
//     every earlier one of its key was delivered, and what a leaving consumer
//     held unacknowledged comes again (oldest first) before anything newer.

const KEYS = 2_000;
/** Messages per key per publish phase, published back to back: a key's next message is there while one is held. */
const PER_PHASE = 2;
const PHASES = 2;
const INITIAL_PERMITS = 200;

/** A small deterministic generator, so a failure replays the same acks. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Held {
  key: string;
  round: number;
  entry: Entry;
}

class KeyedConsumer {
  readonly held: Held[] = [];
  readonly heldKeys = new Map<string, number>();
  left = false;

  constructor(
    readonly name: string,
    readonly stream: TestConsumer,
  ) {}

  take(held: Held): void {
    this.held.push(held);
    this.heldKeys.set(held.key, (this.heldKeys.get(held.key) ?? 0) + 1);
  }

  /** Acks the first `count` held messages and grants as many permits. */
  ackOldest(count: number): Held[] {
    const acked = this.held.splice(0, count);
    if (acked.length === 0) return acked;
    for (const { key } of acked) {
      const left = this.heldKeys.get(key)! - 1;
      if (left === 0) this.heldKeys.delete(key);
      else this.heldKeys.set(key, left);
    }
    this.stream.ack(acked.map((h) => h.entry));
    this.stream.flow(acked.length);
    return acked;
  }
}

describe('writer owner: Key_Shared through the service with thousands of keys', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
  });
  afterAll(async () => harness.close());

  it(`keeps each of ${KEYS} keys on one consumer at a time and in order while consumers join and leave`, async () => {
    const topic = await harness.createTopic('key-shared-many');
    const random = seeded(12);
    const consumers: KeyedConsumer[] = [];
    const violations: string[] = [];
    const delivered = new Map<string, number>(); // key -> highest round delivered
    const released = new Map<string, number[]>(); // key -> rounds a leaving consumer held, to come again
    const acked = new Set<string>();
    let deliveries = 0;

    function deliver(to: KeyedConsumer, entry: Entry): void {
      if (to.left) return; // Arrived after it left: never taken, so it comes again elsewhere.
      deliveries++;
      const message = entry.messages[0]!;
      const key = message.key!;
      const round = Number(Buffer.from(message.payload).toString().split(':')[1]);
      for (const other of consumers) {
        if (other !== to && !other.left && other.heldKeys.has(key)) {
          violations.push(`${key}:${round} went to ${to.name} while ${other.name} held ${key} unacknowledged`);
        }
      }
      const again = released.get(key) ?? [];
      const highest = delivered.get(key) ?? -1;
      if (again.length > 0) {
        if (round !== again[0]) violations.push(`${key}:${round} came before the released ${key}:${again[0]}`);
        else again.shift();
      } else if (round !== highest + 1) {
        violations.push(`${key}:${round} came after ${key}:${highest}`);
      }
      delivered.set(key, Math.max(highest, round));
      to.take({ key, round, entry });
    }

    function join(name: string): KeyedConsumer {
      const stream = new TestConsumer(harness.topics, {
        case: 'subscribe',
        value: {
          topic,
          subscription: 'keyed',
          type: SubscriptionType.KEY_SHARED,
          consumerName: name,
          initialPosition: InitialPosition.EARLIEST,
        },
      });
      const consumer = new KeyedConsumer(name, stream);
      stream.onEntry = (entry) => deliver(consumer, entry);
      consumers.push(consumer);
      stream.flow(INITIAL_PERMITS);
      return consumer;
    }

    function leave(consumer: KeyedConsumer): void {
      consumer.left = true;
      for (const { key, round } of consumer.held) {
        const again = released.get(key) ?? [];
        again.push(round);
        again.sort((a, b) => a - b);
        released.set(key, again);
      }
      consumer.held.length = 0;
      consumer.heldKeys.clear();
      consumer.stream.close();
    }

    /** Every live consumer acks about half of what it holds; run on every check of a wait, so acks trickle. */
    function ackSome(): void {
      for (const consumer of consumers) {
        if (consumer.left) continue;
        const count = Math.ceil(consumer.held.length * random());
        for (const { key, round } of consumer.ackOldest(count)) acked.add(`${key}:${round}`);
      }
    }

    async function publishPhase(phase: number): Promise<void> {
      async function* requests() {
        for (let k = 0; k < KEYS; k++) {
          for (let r = phase * PER_PHASE; r < (phase + 1) * PER_PHASE; r++) {
            yield { message: { topic, key: `key-${k}`, payload: Buffer.from(`key-${k}:${r}`) } };
          }
        }
      }
      for await (const { result } of harness.topics.publish(requests())) {
        // A refusal shows its reason.
        expect(result.case === 'failure' ? `${result.value.reason}: ${result.value.message}` : result.case).toBe(
          'receipt',
        );
      }
    }

    async function progress(what: string, condition: () => boolean): Promise<void> {
      await eventually(
        () => {
          ackSome();
          return condition();
        },
        { description: what, attempts: 6_000, intervalMs: 5 },
      );
    }

    const first = join('c1');
    join('c2');
    await publishPhase(0);
    await progress('a thousand deliveries', () => deliveries >= 1_000);
    join('c3');
    await progress('three thousand deliveries', () => deliveries >= 3_000);
    leave(first);
    await publishPhase(1);
    await progress('six thousand deliveries', () => deliveries >= 6_000);
    join('c4');
    await progress('every message acknowledged', () => acked.size === KEYS * PER_PHASE * PHASES);

    expect(violations.slice(0, 10)).toEqual([]);
    const spread = consumers.map((c) => new Set(c.stream.entries.map((e) => e.messages[0]!.key)).size);
    // Every consumer that stayed got a share of the keys: the hash ranges were really split.
    expect(spread.every((keys) => keys > 0)).toBe(true);
    const stats = await harness.topics.getTopicStats({ topic });
    expect(stats.subscriptions[0]).toMatchObject({ name: 'keyed', type: SubscriptionType.KEY_SHARED });
    await eventually(
      async () => (await harness.topics.getTopicStats({ topic })).subscriptions[0]!.backlogMessages === 0n,
      { description: 'the backlog to reach zero' },
    );
    for (const consumer of consumers) if (!consumer.left) consumer.stream.close();
    for (const consumer of consumers) await consumer.stream.until(() => consumer.stream.ended, 'the stream to end');
  }, 300_000);
});
