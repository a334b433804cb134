import { eventually, startRedis, type ServerProcess } from '@ledgerline/testing';
import { createMetadataStore } from './create-metadata-store.js';
import type { MetadataStore } from './store.js';

describe('RedisMetadataStore outage', () => {
  let redis: ServerProcess;
  let store: MetadataStore;

  beforeAll(async () => {
    redis = await startRedis();
    store = await createMetadataStore({
      kind: 'redis',
      url: redis.url,
      keyPrefix: 'outage:',
      maxReconnectDelayMs: 100,
    });
  });

  afterAll(async () => {
    await store.close();
    await redis.stop();
  });

  it('fails fast with UNAVAILABLE while Redis is down and works again after it restarts', async () => {
    const value = Uint8Array.of(1);
    expect(await store.put('/outage/a', value)).toBe(1);
    const session = await store.openSession({ ttlMs: 500 });
    let expiredCalls = 0;
    session.onExpired(() => expiredCalls++);

    await redis.kill();
    const calls = [
      store.get('/outage/a'),
      store.put('/outage/b', value),
      store.put('/outage/a', value, { expectedVersion: 1 }),
      store.delete('/outage/a'),
      store.children('/outage'),
      store.exists('/outage/a'),
      store.nextId('outage'),
      store.openSession({ ttlMs: 1000 }),
    ];
    const outcomes = await Promise.allSettled(calls);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({
        status: 'rejected',
        reason: { code: 'UNAVAILABLE', reason: 'STORE_UNAVAILABLE' },
      });
    }
    // The owner gives its session up on its own once it cannot renew it for a whole TTL.
    await eventually(() => session.expired && expiredCalls === 1);

    await redis.restart();
    await eventually(async () => {
      try {
        return (await store.put('/outage/a', value)) >= 1;
      } catch {
        return false;
      }
    });
    expect((await store.get('/outage/a'))?.value).toEqual(value);
    expect(await store.nextId('outage')).toBeGreaterThanOrEqual(1);
    const fresh = await store.openSession({ ttlMs: 1000 });
    await store.put('/outage/lease', value, { session: fresh, expectedVersion: 'absent' });
    expect((await store.get('/outage/lease'))?.ephemeralSessionId).toBe(fresh.id);
  });

  it('refuses to start when no Redis answers', async () => {
    await expect(
      createMetadataStore({ kind: 'redis', url: 'redis://127.0.0.1:1', connectTimeoutMs: 300 }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE', reason: 'STORE_UNAVAILABLE' });
  });

  it('rejects configurations it cannot use', async () => {
    const bad = [
      { kind: 'redis' },
      { kind: 'redis', url: 'redis://x', cluster: { startupNodes: [] } },
      { kind: 'redis', url: 'http://x' },
      { kind: 'redis', cluster: { startupNodes: [{ host: 'h', port: 0 }] } },
      { kind: 'redis', url: redis.url, keyPrefix: '{tag}' },
      { kind: 'sqlite', path: '' },
      { kind: 'sqlite', path: ':memory:', maxValueBytes: 0 },
      { kind: 'zookeeper' },
    ];
    for (const config of bad) {
      await expect(createMetadataStore(config as never)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        reason: 'BAD_STORE_CONFIG',
      });
    }
  });
});
