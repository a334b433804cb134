import { ErrorReason } from '@ledgerline/errors';
import { Redis } from 'ioredis';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { expectFailure, taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason } from './errors.js';
import { APPEND_PACKED_SCRIPT } from './redis-scripts.js';
import { RedisLedgerStore } from './redis-store.js';

/* The stored layout other tools and future versions rely on, and the invariant checks over it. */

const url = () => sharedServers().redisUrl;
let admin: Redis;
beforeAll(() => {
  admin = new Redis(url());
});
afterAll(async () => {
  await admin.quit();
});

async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  for (let i = 0; i < 1_000; i++) {
    const [next, batch] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
    keys.push(...batch);
    cursor = next;
    if (cursor === '0') break;
  }
  return keys.sort();
}

it('keeps a ledger in two keys under one hash tag, plus one index of ids', async () => {
  const prefix = `${uniqueNamespace('layout')}:`;
  const store = new RedisLedgerStore({ url: url(), keyPrefix: prefix });
  const writer = await store.create(42, { ownerTags: { b: '2', a: '1' } });
  await writer.append([Uint8Array.of(1, 2, 3), new Uint8Array(0)]);
  expect(await keysUnder(prefix)).toEqual([
    `${prefix}ledgers`,
    `${prefix}{ledger:42}:entries`,
    `${prefix}{ledger:42}:meta`,
  ]);
  const meta = await admin.hgetall(`${prefix}{ledger:42}:meta`);
  expect(meta).toEqual({
    v: '1',
    state: 'open',
    fenced: '0',
    lac: '1',
    size: '3',
    tags: '{"a":"1","b":"2"}',
    created: expect.stringMatching(/^\d+$/),
    wcall: '0',
  });
  expect(await admin.type(`${prefix}{ledger:42}:entries`)).toBe('list');
  expect(await admin.zrangebyscore(`${prefix}ledgers`, '-inf', '+inf', 'WITHSCORES')).toEqual(['42', '42']);
  await store.delete(42);
  expect(await keysUnder(prefix)).toEqual([]);
  await store.close();
});

it('reports stored data that breaks the layout as INTERNAL instead of guessing', async () => {
  const prefix = `${uniqueNamespace('layout')}:`;
  const store = new RedisLedgerStore({ url: url(), keyPrefix: prefix });
  const writer = await store.create(1);
  await writer.append([taggedEntry(0, 0)]);
  await admin.hset(`${prefix}{ledger:1}:meta`, 'lac', '5');
  await expectFailure(writer.append([taggedEntry(1, 0)]), 'INTERNAL', LedgerStoreReason.LEDGER_STORE_CORRUPT);
  await expectFailure(store.read(1, 0, 3), 'INTERNAL', LedgerStoreReason.LEDGER_STORE_CORRUPT);
  await admin.hset(`${prefix}{ledger:1}:meta`, 'v', '9');
  await expectFailure(store.info(1), 'INTERNAL', LedgerStoreReason.LEDGER_STORE_CORRUPT);
  await store.close();
});

it('refuses, unstored, an append that arrives after a later append of its writer', async () => {
  const prefix = `${uniqueNamespace('layout')}:`;
  const store = new RedisLedgerStore({ url: url(), keyPrefix: prefix });
  try {
    const writer = await store.create(1);
    expect(await writer.append([taggedEntry(0, 0)])).toBe(0);
    expect(await writer.append([taggedEntry(1, 0)])).toBe(1);
    // As if the writer's call 4 had overtaken its calls 2 and 3 on the way (a Cluster client re-routing them).
    await admin.hset(`${prefix}{ledger:1}:meta`, 'wcall', '4');
    const error = await expectFailure(writer.append([taggedEntry(2, 0)]), 'UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE);
    expect(error.message).toMatch(/after a later append/);
    await expectFailure(writer.append([taggedEntry(3, 0)]), 'UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE);
    expect(await store.info(1)).toMatchObject({ lastAddConfirmed: 1, sizeBytes: 32 });
    await expectFailure(writer.append([taggedEntry(4, 0)]), 'UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE);
    expect(await writer.append([taggedEntry(5, 0)])).toBe(2);
    expect(await admin.hget(`${prefix}{ledger:1}:meta`, 'wcall')).toBe('5');
  } finally {
    await store.close();
  }
});

it('refuses a key prefix that would break the hash tags', () => {
  for (const keyPrefix of ['a{b', 'x}', 'p'.repeat(129)]) {
    expect(() => new RedisLedgerStore({ url: url(), keyPrefix })).toThrow(
      expect.objectContaining({ reason: ErrorReason.INVALID_CONFIG }),
    );
  }
});

it('stores the entries of one append call as separate list items, packed or not, and refuses sizes that do not add up', async () => {
  const prefix = `${uniqueNamespace('layout')}:`;
  const store = new RedisLedgerStore({ url: url(), keyPrefix: prefix });
  try {
    const writer = await store.create(7);
    // Small entries travel packed in one argument, large ones each in its own: the list holds them alike.
    const small = [Uint8Array.of(1), new Uint8Array(0), Uint8Array.of(2, 3), new Uint8Array(3_000).fill(9)];
    const large = [new Uint8Array(20_000).fill(4), new Uint8Array(30_000).fill(5)];
    expect(await writer.append(small)).toBe(0);
    expect(await writer.append(large)).toBe(4);
    const list = `${prefix}{ledger:7}:entries`;
    const stored = await admin.lrangeBuffer(list, 0, -1);
    expect(stored.map((item) => [...item])).toEqual([...small, ...large].map((entry) => [...entry]));
    expect(await store.info(7)).toMatchObject({ lastAddConfirmed: 5, sizeBytes: 53_003 });
    // The packed script itself, called with sizes that claim more bytes than came: nothing is stored.
    const meta = `${prefix}{ledger:7}:meta`;
    await expect(admin.eval(APPEND_PACKED_SCRIPT, 2, meta, list, '99', '2,2', Buffer.of(1, 2, 3))).rejects.toThrow(
      /^BAD_ENTRY the entry sizes add up to 4 bytes, but 3 came/,
    );
    expect(await admin.llen(list)).toBe(6);
    expect(await store.info(7)).toMatchObject({ lastAddConfirmed: 5, sizeBytes: 53_003 });
  } finally {
    await store.close();
  }
});
