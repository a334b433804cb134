import { RedisLedgerStore } from '@ledgerline/ledger-store';
import { testBackends } from '@ledgerline/managed-ledger/testing';
import { decodeMessageEntry } from '@ledgerline/message-format';
import { decodeEntry } from '@ledgerline/offset-index';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { TopicBatch } from './topic-batch.js';
import { TEST_DEDUP_SETTINGS, openTestTopic } from './testing/test-topic.js';

/*
 * A published entry's bytes are encoded once and then only shared: the
 * store write sends them as they are (no copy into a command buffer), the
 * entry cache keeps a view of them, readers are handed that view. Memory
 * handed out again after the publish (Node's buffer pool, any pool of the
 * owner's) must never be memory an entry still uses: once it is overwritten,
 * every entry still reads back whole, its CRC32C checked, through the cache
 * and from the store.
 */

const TOPIC = 'persistent://t/ns/publish-bytes-reuse';
const ENTRY_BYTES = 1024;
const PER_BATCH = 50;
const BATCHES = 4;
const OVERWRITE = 0xee;

/** A payload that says which entry it is in every byte, so a byte from another entry or a pool shows. */
function payloadOf(id: number): Uint8Array {
  const payload = new Uint8Array(ENTRY_BYTES);
  for (let i = 0; i < payload.length; i++) payload[i] = (id * 131 + i) & 0xff;
  return payload;
}

async function publishIds(topic: OwnedTopic, first: number, count: number): Promise<void> {
  const messages = Array.from({ length: count }, (_, i) => ({
    topic: TOPIC,
    producerName: 'p',
    sequenceId: BigInt(first + i),
    payload: payloadOf(first + i),
  }));
  const batch = new TopicBatch(messages as never, new ProducerFence(), undefined);
  topic.enqueue(batch);
  await batch.answered;
  expect(batch.receipts.filter((receipt) => receipt !== undefined)).toHaveLength(count);
}

/** Fills what the buffer pool and the owner hand out next with one byte, as a reused slab would be. */
function overwritePools(): void {
  for (let i = 0; i < 4_000; i++) Buffer.allocUnsafe(ENTRY_BYTES + 64).fill(OVERWRITE);
}

/** The entry's sequence id and payload, its CRC32C checked (decodeMessageEntry refuses a mismatch). */
function decoded(entry: Uint8Array): [bigint, string] {
  const message = decodeMessageEntry(entry);
  return [message.header.sequenceId, Buffer.from(message.messages[0]!.payload).toString('hex')];
}

let store: RedisLedgerStore;
let topic: OwnedTopic;
beforeEach(async () => {
  store = new RedisLedgerStore({ url: sharedServers().redisUrl, keyPrefix: `${uniqueNamespace('bytes-reuse')}:` });
  topic = await openTestTopic(TOPIC, testBackends({ ledgerStore: store }), TEST_DEDUP_SETTINGS, {
    maxWriteBatchEntries: 20,
  });
});
afterEach(async () => {
  await topic.unload('test finished');
  await store.close();
});

it('reads every published entry back whole through the cache and from the store after the pools are overwritten', async () => {
  const total = PER_BATCH * BATCHES;
  for (let batch = 0; batch < BATCHES; batch++) {
    await publishIds(topic, batch * PER_BATCH, PER_BATCH);
    overwritePools();
  }
  const expected = Array.from({ length: total }, (_, id): [bigint, string] => [
    BigInt(id),
    Buffer.from(payloadOf(id)).toString('hex'),
  ]);

  const ledgerId = topic.ledger.ledgers()[0]!.ledgerId;
  const cached = await topic.ledger.readEntries({ ledgerId, entryId: 0 }, { maxEntries: total });
  expect(cached.map((entry) => decoded(entry.payload))).toEqual(expected);

  const stored = await store.read(ledgerId, 0, total - 1);
  expect(stored.map(({ data }) => decoded(decodeEntry(data).payload))).toEqual(expected);
});
