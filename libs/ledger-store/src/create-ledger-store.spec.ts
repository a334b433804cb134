import { ErrorReason } from '@ledgerline/errors';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import { createLedgerStore, type LedgerStoreConfig } from './create-ledger-store.js';
import { LedgerStoreReason } from './errors.js';
import { RedisLedgerStore } from './redis-store.js';
import { SqliteLedgerStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ledger-store-factory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('opens a SQLite store from a configuration and wires the LAC hook', async () => {
  const hints: [number, number][] = [];
  const store = createLedgerStore(
    { kind: 'sqlite', path: join(dir, 'a.db'), synchronous: 'NORMAL', limits: { maxEntryBytes: 8 } },
    { onLacAdvanced: (id, lac) => hints.push([id, lac]) },
  );
  expect(store).toBeInstanceOf(SqliteLedgerStore);
  const writer = await store.create(1);
  await writer.append([new Uint8Array(8)]);
  await expect(writer.append([new Uint8Array(9)])).rejects.toMatchObject({ reason: LedgerStoreReason.ENTRY_TOO_LARGE });
  expect(hints).toEqual([[1, 0]]);
  await store.close();
});

it('opens a Redis store from a configuration', async () => {
  const store = createLedgerStore({
    kind: 'redis',
    url: sharedServers().redisUrl,
    keyPrefix: `${uniqueNamespace('factory')}:`,
    waitReplicas: 0,
  });
  expect(store).toBeInstanceOf(RedisLedgerStore);
  expect(await (await store.create(5)).append([Uint8Array.of(1)])).toBe(0);
  expect(await store.lastAddConfirmed(5)).toBe(0);
  await store.close();
});

it('names what is wrong with a bad configuration', () => {
  const bad: [unknown, RegExp][] = [
    [{ kind: 'sqlite' }, /path/],
    [{ kind: 'sqlite', path: 'x.db', synchronous: 'OFF' }, /synchronous/],
    [{ kind: 'sqlite', path: 'x.db', limits: { maxEntryBytes: 0 } }, /maxEntryBytes/],
    [{ kind: 'redis' }, /exactly one of url and cluster/],
    [{ kind: 'redis', url: 'redis://h:1', cluster: { startupNodes: [{ host: 'h', port: 1 }] } }, /exactly one/],
    [{ kind: 'redis', url: 'http://h:1' }, /redis:\/\//],
    [{ kind: 'redis', url: 'redis://h:1', keyPrefix: 'a{b}' }, /keyPrefix/],
    [{ kind: 'redis', url: 'redis://h:1', waitReplicas: -1 }, /waitReplicas/],
    [{ kind: 'redis', url: 'redis://h:1', waitReplicas: 1, waitTimeoutMs: 6_000 }, /waitTimeoutMs/],
    [{ kind: 'redis', url: 'redis://h:1', urll: 'typo' }, /urll/],
    [{ kind: 'mongo' }, /kind/],
  ];
  for (const [config, message] of bad) {
    let thrown: unknown;
    try {
      createLedgerStore(config as LedgerStoreConfig);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'INVALID_ARGUMENT', reason: ErrorReason.INVALID_CONFIG });
    expect((thrown as Error).message).toMatch(message);
  }
});
