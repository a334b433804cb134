import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { RpcReason } from '@ledgerline/rpc';
import { eventually } from '@ledgerline/testing';
import type { MetadataClients } from './metadata-clients.js';
import { LoadMeter } from './owner-load.js';
import { OwnerSession } from './owner-session.js';

const SESSION = '00000000-0000-0000-0000-000000000001';

function fakeClients(keepAlive: (request?: unknown, options?: { deadlineMs?: number }) => Promise<object>): {
  clients: MetadataClients;
  registrations: number;
} {
  const state = { registrations: 0 };
  const lookup = {
    registerOwner: async () => {
      state.registrations++;
      return { sessionId: SESSION, sessionTtlMs: 300n };
    },
    keepAliveOwner: keepAlive,
    unregisterOwner: async () => ({}),
  };
  return {
    clients: { lookup, admin: {} } as unknown as MetadataClients,
    get registrations() {
      return state.registrations;
    },
  };
}

function lostPromise(): { lost: Promise<LedgerlineError>; onLost: (error: LedgerlineError) => void } {
  let onLost: (error: LedgerlineError) => void = () => undefined;
  const lost = new Promise<LedgerlineError>((resolve) => (onLost = resolve));
  return { lost, onLost };
}

const identity = { instanceId: 'w', group: 'default', advertisedAddress: 'localhost:1' };
const logger = { warn: () => undefined };

describe('OwnerSession', () => {
  it('reports the session lost when the metadata service says it expired, then registers again', async () => {
    const fake = fakeClients(async () => {
      throw new LedgerlineError('NOT_FOUND', MetadataServiceReason.SESSION_EXPIRED, 'gone');
    });
    const { lost, onLost } = lostPromise();
    const session = new OwnerSession({ clients: fake.clients, identity, ttlMs: 300, onLost, logger });
    await session.start();
    expect(session.sessionId).toBe(SESSION);
    expect((await lost).reason).toBe('SESSION_EXPIRED');
    expect(() => session.sessionId).toThrow(LedgerlineError);
    await session.stop();
  });

  it('gives the session up once no keep-alive succeeded for a whole TTL', async () => {
    const fake = fakeClients(async () => {
      throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'metadata unreachable');
    });
    const { lost, onLost } = lostPromise();
    const session = new OwnerSession({ clients: fake.clients, identity, ttlMs: 300, onLost, logger });
    await session.start();
    expect((await lost).reason).toBe('TRANSPORT_UNAVAILABLE');
    expect(session.isLive()).toBe(false);
    await session.stop();
  });

  it('tries again within the TTL when a keep-alive hangs (a metadata replica that lost its store), keeping the session', async () => {
    let calls = 0;
    // The first keep-alive gets no answer: it ends at its deadline, as a gRPC call does.
    const fake = fakeClients(async (_request, options) => {
      calls++;
      if (calls > 1) return {};
      await new Promise((resolve) => setTimeout(resolve, options?.deadlineMs ?? 0));
      throw new LedgerlineError('DEADLINE_EXCEEDED', RpcReason.DEADLINE_EXCEEDED, 'no answer');
    });
    let lostWith: LedgerlineError | undefined;
    // The hung keep-alive fails at a third of the TTL plus half of it: the TTL leaves a sixth (750 ms) for the
    // timers to run late on a busy machine before the session would lapse (600 ms left 100, and a run lost it).
    const session = new OwnerSession({
      clients: fake.clients,
      identity,
      ttlMs: 4_500,
      onLost: (error) => (lostWith = error),
      logger,
    });
    await session.start();
    await eventually(() => calls >= 3, { attempts: 500, intervalMs: 20 });
    expect(lostWith).toBeUndefined();
    expect(session.sessionId).toBe(SESSION);
    await session.stop();
  });

  it('carries the owner load with each keep-alive', async () => {
    const requests: { load?: { topicsOwned: number; messagesInPerSecond: number } }[] = [];
    const fake = fakeClients(async (request?: unknown) => {
      requests.push(request as never);
      return {};
    });
    let messagesIn = 0;
    const load = new LoadMeter(() => ({
      messagesIn: (messagesIn += 100),
      bytesIn: 0,
      messagesOut: 0,
      bytesOut: 0,
      topicsOwned: 4,
      pendingEntries: 0,
    }));
    const session = new OwnerSession({
      clients: fake.clients,
      identity,
      ttlMs: 300,
      onLost: () => undefined,
      logger,
      load,
    });
    await session.start();
    await eventually(() => requests.length >= 2, { attempts: 100, description: 'two keep-alives' });
    await session.stop();
    expect(requests[1]?.load?.topicsOwned).toBe(4);
    expect(requests[1]?.load?.messagesInPerSecond).toBeGreaterThan(0);
  });
});
