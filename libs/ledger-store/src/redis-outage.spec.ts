import { Redis } from 'ioredis';
import { LedgerlineError } from '@ledgerline/errors';
import { eventually, startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { expectFailure, taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason as R } from './errors.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * Fault injection on a private redis-server. It runs without persistence, so
 * a killed server comes back empty: across a kill we check only that calls
 * fail fast and that the store recovers; what must survive is checked across
 * dropped connections (CLIENT KILL), which lose no data on the server.
 */

const CONNECTION_NAME = 'ledger-store-outage-test';
let redis: ServerProcess;

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

function openStore(): RedisLedgerStore {
  return new RedisLedgerStore({
    url: redis.url,
    keyPrefix: `${uniqueNamespace('outage')}:`,
    connectionName: CONNECTION_NAME,
  });
}

/** The ids of the store's connections, so a later CLIENT KILL can drop them as a network blip would. */
async function storeConnectionIds(admin: Redis): Promise<string[]> {
  const clients = (await admin.client('LIST')) as string;
  return clients
    .split('\n')
    .filter((line) => line.includes(` name=${CONNECTION_NAME} `))
    .map((line) => /id=(\d+)/.exec(line)![1]!);
}

function expectUnavailable(outcome: PromiseSettledResult<unknown>): void {
  if (outcome.status === 'fulfilled') return;
  const error = outcome.reason as LedgerlineError;
  expect(error).toBeInstanceOf(LedgerlineError);
  expect(`${error.code} ${error.reason}`).toBe(`UNAVAILABLE ${R.storeUnavailable}`);
}

it('loses no acknowledged entry and stores none twice when its connections drop mid-append', async () => {
  const admin = new Redis(redis.url);
  const store = openStore();
  const writer = await store.create(1);
  const acknowledged = new Map<number, string>();
  let unacknowledgedEntries = 0;
  for (let round = 0; round < 6; round++) {
    // Odd rounds hold writes at the server, so the kill surely finds appends in flight;
    // even rounds let the kill race the appends and land wherever it lands.
    const paused = round % 2 === 1;
    const ids = await storeConnectionIds(admin);
    expect(ids.length).toBeGreaterThan(0);
    if (paused) await admin.client('PAUSE', 5_000, 'WRITE');
    const appends = Array.from({ length: 100 }, (_, i) => {
      const entries = Array.from({ length: 8 }, (_, k) => taggedEntry(round * 1_000 + i, k, 1_024));
      return writer
        .append(entries)
        .then((first) =>
          entries.forEach((entry, k) => acknowledged.set(first + k, Buffer.from(entry).toString('hex'))),
        );
    });
    await Promise.all(ids.map((id) => admin.client('KILL', 'ID', id)));
    if (paused) await admin.client('UNPAUSE');
    const outcomes = await Promise.allSettled(appends);
    outcomes.forEach(expectUnavailable);
    if (paused) expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    unacknowledgedEntries += outcomes.filter((o) => o.status === 'rejected').length * 8;
    await eventually(async () => (await store.lastAddConfirmed(1).catch(() => -2)) > -2);
  }
  const lac = await store.lastAddConfirmed(1);
  const stored = (await store.read(1, 0, lac)).map((e) => Buffer.from(e.data).toString('hex'));
  for (const [id, hex] of acknowledged) expect(stored[id]).toBe(hex);
  expect(new Set(stored).size).toBe(stored.length);
  // Only unacknowledged appends may be missing; one that ran before its connection dropped may have landed.
  expect(stored.length).toBeGreaterThanOrEqual(acknowledged.size);
  expect(stored.length).toBeLessThanOrEqual(acknowledged.size + unacknowledgedEntries);
  expect(unacknowledgedEntries).toBeGreaterThan(0);
  await store.close();
  await admin.quit();
});

it('fails fast with UNAVAILABLE while Redis is down and works again after it restarts', async () => {
  const store = openStore();
  const writer = await store.create(1);
  await writer.append([taggedEntry(0, 0)]);
  await redis.kill();
  const outcomes = await Promise.allSettled([
    writer.append([taggedEntry(1, 0)]),
    writer.close(),
    store.read(1, 0, 0),
    store.info(1),
    store.lastAddConfirmed(1),
    store.fence(1),
    store.closeLedger(1),
    store.create(2),
    store.delete(1),
    store.list(),
  ]);
  for (const outcome of outcomes) {
    expect(outcome.status).toBe('rejected');
    expectUnavailable(outcome);
  }
  await redis.restart();
  await eventually(
    async () => {
      try {
        await store.create(3);
        return true;
      } catch (thrown) {
        expect((thrown as LedgerlineError).code).toBe('UNAVAILABLE');
        return false;
      }
    },
    { attempts: 100, intervalMs: 50 },
  );
  const recovered = await store.fence(3);
  expect(recovered).toBe(-1);
  const next = await store.create(4);
  expect(await next.append([taggedEntry(2, 0), taggedEntry(2, 1)])).toBe(0);
  expect((await store.read(4, 0, 1)).length).toBe(2);
  await expectFailure(store.read(4, 0, 2), 'OUT_OF_RANGE', R.entryNotConfirmed);
  await store.close();
});
