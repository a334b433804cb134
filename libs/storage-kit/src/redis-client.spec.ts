import { freePort, sharedServers } from '@ledgerline/testing';
import { ErrorReason } from '@ledgerline/errors';
import { awaitRedisReady, checkRedisTarget, disconnectRedis, openRedisClient } from './redis-client.js';
import { BackgroundErrorKind, type BackgroundErrors } from './storage-errors.js';

function recorder(): BackgroundErrors & { seen: { kind: string; error: unknown }[] } {
  const seen: { kind: string; error: unknown }[] = [];
  return { seen, report: (kind, error) => seen.push({ kind, error }) };
}

describe('openRedisClient', () => {
  it('connects, serves commands and disconnects', async () => {
    const errors = recorder();
    const client = openRedisClient(
      { url: sharedServers().redisUrl },
      { connectionName: 'storage-kit-spec', offlineQueue: false, autoPipelining: true, errors },
    );
    await awaitRedisReady(client, {}, 'the spec Redis');
    await expect(client.call('CLIENT', 'GETNAME')).resolves.toBe('storage-kit-spec');
    await disconnectRedis(client);
    expect(errors.seen).toEqual([]);
  });

  it('reports connection errors instead of dropping them, and fails the connect with STORE_UNAVAILABLE', async () => {
    const errors = recorder();
    const options = { url: `redis://127.0.0.1:${await freePort()}`, connectTimeoutMs: 200 };
    const client = openRedisClient(options, {
      connectionName: 'storage-kit-spec',
      offlineQueue: false,
      autoPipelining: false,
      errors,
    });
    await expect(awaitRedisReady(client, options, 'the spec Redis')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      reason: ErrorReason.STORE_UNAVAILABLE,
    });
    expect(errors.seen.length).toBeGreaterThan(0);
    expect(errors.seen[0]!.kind).toBe(BackgroundErrorKind.REDIS_CONNECTION);
  });
});

describe('checkRedisTarget', () => {
  it.each([
    [{}, /needs url/],
    [{ url: 'http://x' }, /needs url/],
    [{ cluster: { startupNodes: [] } }, /startupNodes/],
    [{ cluster: { startupNodes: [{ host: 'h', port: 70000 }] } }, /startupNodes/],
  ])('refuses %j with INVALID_CONFIG', (options, message) => {
    expect(() => checkRedisTarget(options, 'a spec store')).toThrow(message);
    expect(() => checkRedisTarget(options, 'a spec store')).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: ErrorReason.INVALID_CONFIG }),
    );
  });

  it('accepts one url or one cluster', () => {
    expect(() => checkRedisTarget({ url: 'redis://127.0.0.1:6380' }, 'a spec store')).not.toThrow();
    expect(() => checkRedisTarget({ cluster: { startupNodes: [{ host: 'h', port: 7000 }] } }, 'x')).not.toThrow();
  });
});
