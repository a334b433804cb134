import { ManagedLedger } from '@ledgerline/managed-ledger';
import { testBackends, type TestBackends } from '@ledgerline/managed-ledger/testing';
import { encodeMessageEntry } from '@ledgerline/message-format';
import { encodeEntries, entryDelivery, type WriterEntry } from '@ledgerline/ownership';
import { Subscription, SubscriptionType, type Delivery } from '@ledgerline/subscriptions';
import { CursorSource } from './cursor-source.js';

/*
 * An entry is decoded once, where its bytes come from (the append, or the
 * store on a read the cache did not answer), and that decoded form is shared
 * by every subscription reading it: the same object reaches them all, and
 * their responses are the same bytes.
 */

const TOPIC = 'persistent://t/ns/shared-dispatch';
const COUNT = 6;

function message(sequenceId: number): Uint8Array {
  return encodeMessageEntry({
    producerName: 'p',
    sequenceId: BigInt(sequenceId),
    publishTimeMs: 1_700_000_000_000,
    key: `k${sequenceId % 2}`,
    properties: { n: String(sequenceId) },
    // Entries of 1 KiB: a form is kept for entries it costs no more than (writer-entry.ts).
    payload: new Uint8Array(1024).fill(sequenceId),
  });
}

/** A copy of a stored entry's bytes whose checksum no longer matches them. */
function corrupt(bytes: Uint8Array): Uint8Array {
  const copy = bytes.slice();
  copy[copy.length - 1]! ^= 0x01;
  return copy;
}

const ledgers: ManagedLedger[] = [];
const subscriptions: Subscription<WriterEntry>[] = [];
afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) await subscription.close();
  for (const ledger of ledgers.splice(0)) await ledger.close();
});

async function open(backends: TestBackends): Promise<ManagedLedger> {
  const ledger = await ManagedLedger.open(TOPIC, backends.deps());
  ledgers.push(ledger);
  return ledger;
}

/**
 * A subscription over its own cursor of `ledger`, with one Exclusive consumer:
 * resolves with the first `count` deliveries once they have all arrived.
 */
async function readBy(ledger: ManagedLedger, name: string, count: number): Promise<Delivery<WriterEntry>[]> {
  const cursor = await ledger.openCursor(name, { start: { initialPosition: 'earliest' } });
  const subscription = new Subscription<WriterEntry>({ name, source: new CursorSource(ledger, cursor) });
  subscriptions.push(subscription);
  const delivered: Delivery<WriterEntry>[] = [];
  return new Promise((resolve) => {
    const deliver = (delivery: Delivery<WriterEntry>) => {
      delivered.push(delivery);
      if (delivered.length === count) resolve(delivered);
    };
    const consumer = subscription.addConsumer({
      name: 'c',
      type: SubscriptionType.EXCLUSIVE,
      sink: { deliver, activeChanged: () => undefined, close: () => undefined },
    });
    consumer.flow(count);
  });
}

const bytesOf = (deliveries: Delivery<WriterEntry>[]) =>
  Buffer.from(encodeEntries(deliveries.map(entryDelivery)).bytes).toString('hex');

describe('dispatch: one decoded entry for every subscription', () => {
  it('hands two subscriptions reading the same cached entries the same decoded entries, and the same response bytes', async () => {
    const ledger = await open(testBackends());
    for (let i = 0; i < COUNT; i++) await ledger.append(message(i));
    const [first, second] = await Promise.all([readBy(ledger, 'first', COUNT), readBy(ledger, 'second', COUNT)]);
    for (let i = 0; i < COUNT; i++) expect(second[i]!.entry).toBe(first[i]!.entry);
    expect(bytesOf(second)).toBe(bytesOf(first));
    expect(first.map((d) => d.entry.key)).toEqual(['k0', 'k1', 'k0', 'k1', 'k0', 'k1']);
  });

  it('decodes entries read from the store once, for every subscription after the first read', async () => {
    const backends = testBackends();
    const writer = await open(backends);
    for (let i = 0; i < COUNT; i++) await writer.append(message(i));
    await writer.close();
    ledgers.splice(0);
    // A new owner: its cache is empty, so the first subscription's reads come from the store and fill it.
    const ledger = await open(backends);
    const first = await readBy(ledger, 'first', COUNT);
    const second = await readBy(ledger, 'second', COUNT);
    for (let i = 0; i < COUNT; i++) expect(second[i]!.entry).toBe(first[i]!.entry);
    expect(bytesOf(second)).toBe(bytesOf(first));
  });

  it('hands an entry whose checksum fails in the store out raw, the same way, to every subscription reading it', async () => {
    const backends = testBackends();
    const writer = await open(backends);
    await writer.append(message(0));
    await writer.append(corrupt(message(1)));
    await writer.append(message(2));
    await writer.close();
    ledgers.splice(0);
    const ledger = await open(backends);
    const first = await readBy(ledger, 'first', 3);
    const second = await readBy(ledger, 'second', 3);
    for (const deliveries of [first, second]) {
      const raw = deliveries[1]!.entry;
      expect(raw.key).toBeUndefined();
      expect([...raw.wire.batchIndexes]).toEqual([-1]);
      expect(raw.wire.payload(0)).toEqual(corrupt(message(1)));
      expect(deliveries.map((d) => d.entry.wire.count)).toEqual([1, 1, 1]);
      expect(deliveries[2]!.entry.key).toBe('k0');
    }
    expect(second[1]!.entry).toBe(first[1]!.entry);
    expect(bytesOf(second)).toBe(bytesOf(first));
  });
});
