import { Redis } from 'ioredis';
import { eventually, sharedServers, startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { expectFailure, taggedEntry } from './testing/conformance-support.js';
import { LedgerStoreReason as R } from './errors.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * WAIT before acknowledging: with a live replica an append is acknowledged
 * only once the replica holds it; without enough replicas it fails
 * UNAVAILABLE / REPLICATION_INCOMPLETE while the entries stay in the ledger.
 */

it('reports an append no replica confirmed as REPLICATION_INCOMPLETE, leaving its entries stored', async () => {
  const keyPrefix = `${uniqueNamespace('wait')}:`;
  const url = sharedServers().redisUrl;
  const waiting = new RedisLedgerStore({ url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 20 });
  const reader = new RedisLedgerStore({ url, keyPrefix });
  try {
    const writer = await waiting.create(1);
    const error = await expectFailure(
      writer.append([taggedEntry(0, 0), taggedEntry(0, 1)]),
      'UNAVAILABLE',
      R.replicationIncomplete,
    );
    expect(error.details).toEqual({ ledgerId: '1', firstEntryId: '0', count: '2' });
    expect(await reader.lastAddConfirmed(1)).toBe(1);
  } finally {
    await waiting.close();
    await reader.close();
  }
});

describe('with a replica', () => {
  let primary: ServerProcess;
  let replica: ServerProcess;
  beforeAll(async () => {
    // Diskless sync without delay: the replica is in sync in milliseconds instead of seconds.
    primary = await startRedis({ extraArgs: ['--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0'] });
    replica = await startRedis({ extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] });
  });
  afterAll(async () => {
    await replica.stop();
    await primary.stop();
  });

  it('acknowledges an append only once the replica holds it', async () => {
    const keyPrefix = `${uniqueNamespace('wait')}:`;
    const store = new RedisLedgerStore({ url: primary.url, keyPrefix, waitReplicas: 1, waitTimeoutMs: 2_000 });
    const replicaClient = new Redis(replica.url);
    try {
      await eventually(async () => (await replicaClient.info('replication')).includes('master_link_status:up'), {
        attempts: 200,
        intervalMs: 25,
      });
      const writer = await store.create(7);
      const batches = await Promise.all(
        Array.from({ length: 10 }, (_, call) => writer.append([taggedEntry(call, 0), taggedEntry(call, 1)])),
      );
      expect(batches).toEqual(Array.from({ length: 10 }, (_, call) => call * 2));
      // WAIT returned, so the replica already has every acknowledged entry: no polling needed.
      const onReplica = await replicaClient.lrangeBuffer(`${keyPrefix}{ledger:7}:entries`, 0, -1);
      expect(onReplica.map((b) => b.toString('hex'))).toEqual(
        Array.from({ length: 20 }, (_, i) => Buffer.from(taggedEntry(i >> 1, i & 1)).toString('hex')),
      );
    } finally {
      await store.close();
      replicaClient.disconnect();
    }
  });
});
