import { Redis } from 'ioredis';
import { LedgerlineError } from '@ledgerline/errors';
import { eventually, sharedServers, startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { connectMetadataRedis } from './redis-store.js';
import type { RedisClient } from './redis-scripts.js';
import { RedisMetadataStore } from './redis-store.js';

/*
 * Sessions on Redis where timing matters: a session that ends while an
 * ephemeral put is on its way, and a session that must outlive short
 * connection drops (its owner renews it once the connection is back).
 */

const value = Uint8Array.of(1);

/** A client whose chosen commands wait at a gate until the test opens it. */
function gatedClient(client: RedisClient, holds: (command: string, args: unknown[]) => boolean) {
  let open: () => void = () => undefined;
  let reached: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  const proxy = new Proxy(client, {
    get(target, property, receiver) {
      const member = Reflect.get(target, property, receiver) as unknown;
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        if (!holds(String(property), args)) return (member as (...a: unknown[]) => unknown).apply(target, args);
        reached();
        return gate.then(() => (member as (...a: unknown[]) => unknown).apply(target, args));
      };
    },
  });
  return { client: proxy, open: () => open(), arrived };
}

it('fails an ephemeral put whose session ended on the way, leaving no node behind', async () => {
  const keyPrefix = `${uniqueNamespace('in-flight')}:`;
  const url = sharedServers().redisUrl;
  const admin = new Redis(url);
  let sessionId = '';
  // The put script (three keys, the session id among its arguments) and every renewal wait at the gate.
  const gated = gatedClient(
    await connectMetadataRedis({ url }),
    (command, args) => (command === 'evalsha' && args[1] === 3 && args.includes(sessionId)) || command === 'pexpire',
  );
  const owner = new RedisMetadataStore(gated.client, { keyPrefix, sessionSweepIntervalMs: 60_000 });
  const other = await RedisMetadataStore.connect({ url }, { keyPrefix });
  try {
    // Long enough that the put below reaches the store before the session lapses, even when a busy
    // machine stalls this process (300 ms did not: the put was refused at once and never reached the gate).
    const session = await owner.openSession({ ttlMs: 2_000 });
    sessionId = session.id;
    const put = owner.put('/leases/a', value, { session }).then(
      (version) => `version ${version}`,
      (thrown: LedgerlineError) => `${thrown.code} ${thrown.reason}`,
    );
    const early = put.then((outcome) => {
      throw new Error(`the put ended before it reached the store: ${outcome}`);
    });
    // Only the race looks at it: once the put has reached the gate, its ending later is expected.
    early.catch(() => undefined);
    await Promise.race([gated.arrived, early]);
    // No renewal gets through: the session key runs out, and another client sweeps the session away.
    await eventually(async () => (await admin.exists(`${keyPrefix}{session:${sessionId}}`)) === 0, {
      attempts: 250,
      intervalMs: 20,
    });
    await other.sweepExpiredSessions();
    gated.open();
    expect(await put).toBe('FAILED_PRECONDITION SESSION_EXPIRED');
    expect(await other.get('/leases/a')).toBeUndefined();
    expect(await admin.exists(`${keyPrefix}{/leases}:node:a`)).toBe(0);
    expect(await admin.hlen(`${keyPrefix}{/leases}:ephemeral`)).toBe(0);
    expect(await other.children('/leases')).toEqual({ names: [] });
    expect(session.expired).toBe(true);
  } finally {
    gated.open();
    await owner.close();
    await other.close();
    admin.disconnect();
  }
});

describe('with connections dropped', () => {
  let redis: ServerProcess;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('keeps a session alive through short connection drops within its TTL', async () => {
    const keyPrefix = `${uniqueNamespace('keep-alive')}:`;
    const admin = new Redis(redis.url);
    const owner = await RedisMetadataStore.connect({ url: redis.url, maxReconnectDelayMs: 50 }, { keyPrefix });
    const reader = await RedisMetadataStore.connect({ url: redis.url, maxReconnectDelayMs: 50 }, { keyPrefix });
    try {
      const session = await owner.openSession({ ttlMs: 3_000 });
      let expiredCalls = 0;
      session.onExpired(() => expiredCalls++);
      await owner.put('/leases/kept', value, { session });
      // A drop after each renewal, seven renewals (a third of the TTL apart) in all: the drops
      // span more than two TTLs, so only renewals made between them can keep the session.
      for (let drop = 0; drop < 7; drop++) {
        const renewals = session.renewals;
        await eventually(() => session.renewals > renewals || session.expired, {
          description: `renewal ${renewals + 1}`,
        });
        await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      }
      await eventually(async () => (await reader.get('/leases/kept').catch(() => 'unavailable')) !== 'unavailable');
      expect(await reader.get('/leases/kept')).toMatchObject({ ephemeralSessionId: session.id });
      expect(session.expired).toBe(false);
      expect(expiredCalls).toBe(0);
      await session.close();
      expect(await reader.get('/leases/kept')).toBeUndefined();
    } finally {
      await owner.close();
      await reader.close();
      admin.disconnect();
    }
  }, 30_000);
});
