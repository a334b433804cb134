import { createServer, type Server } from 'node:net';
import { eventually } from '@ledgerline/testing';
import type { ProbeVerdict } from './address-probe.js';
import { loadRecord } from '../records/owner-load.js';
import { SessionLiveness } from './session-liveness.js';
import { failure, sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';

const TOPIC = 'persistent://tenant/ns/topic';
const FAST = { confirmDelayMs: 20, armIntervalMs: 20, armAttempts: 5, probeTimeoutMs: 500 };

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function addressOf(server: Server): string {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return `127.0.0.1:${address.port}`;
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Reads a watch until it says it is armed (or not, after its attempts), leaving the stream open. */
async function armedState(stream: AsyncIterable<{ earlyExpiryArmed: boolean }>): Promise<boolean> {
  const iterator = stream[Symbol.asyncIterator]();
  expect((await iterator.next()).value).toEqual({ earlyExpiryArmed: false });
  const next = await Promise.race([
    iterator.next(),
    new Promise<'silent'>((resolve) => setTimeout(() => resolve('silent'), 500)),
  ]);
  // Keep the generator running so that it sees the abort.
  if (next !== 'silent') iterator.next().catch(() => undefined);
  return next !== 'silent' && next.value?.earlyExpiryArmed === true;
}

describe('early session expiry (WatchOwnerSession)', () => {
  let fixture: SqliteFixture;
  const servers: Server[] = [];
  beforeEach(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('tenant');
    await fixture.admin.createNamespace('tenant/ns');
    await fixture.admin.createTopic(TOPIC);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => (server.listening ? close(server) : undefined)));
    await fixture.close();
  });

  async function ownerAt(address: string, instanceId = 'writer-1') {
    const session = await fixture.admin.registerOwner(
      { instanceId, role: 'writer', group: 'default', advertisedAddress: address },
      60_000,
    );
    await fixture.admin.acquireLease(TOPIC, session.sessionId);
    return session;
  }

  it('frees the leases of an owner whose stream dropped and whose port refuses connections', async () => {
    const server = await listen();
    servers.push(server);
    const liveness = new SessionLiveness(fixture.admin.context, FAST);
    const owner = await ownerAt(addressOf(server));
    const call = new AbortController();
    expect(await armedState(liveness.watch(owner.sessionId, call.signal))).toBe(true);
    await close(server);
    call.abort();
    await eventually(async () => (await fixture.admin.getLease(TOPIC)) === undefined, {
      attempts: 200,
      description: 'the lease freed before the TTL',
    });
    expect(await failure(fixture.admin.keepAliveOwner(owner.sessionId))).toMatchObject({ reason: 'SESSION_EXPIRED' });
    const next = await ownerAt('127.0.0.1:1', 'writer-2');
    expect((await fixture.admin.getLease(TOPIC))?.instanceId).toBe('writer-2');
    expect(next.sessionId).not.toBe(owner.sessionId);
    await liveness.close();
  });

  it('keeps the session of an owner whose port still accepts (a stopped process)', async () => {
    const server = await listen();
    servers.push(server);
    const liveness = new SessionLiveness(fixture.admin.context, FAST);
    const owner = await ownerAt(addressOf(server));
    const call = new AbortController();
    expect(await armedState(liveness.watch(owner.sessionId, call.signal))).toBe(true);
    call.abort();
    await liveness.close();
    expect((await fixture.admin.getLease(TOPIC))?.instanceId).toBe('writer-1');
    await fixture.admin.keepAliveOwner(owner.sessionId);
  });

  /** A probe answering `verdicts` in turn, then the last one again; counts its calls. */
  function scripted(verdicts: ProbeVerdict[], onProbe: (call: number) => Promise<void> = async () => undefined) {
    const state = { calls: 0 };
    const probe = async (): Promise<ProbeVerdict> => {
      const verdict = verdicts[Math.min(state.calls, verdicts.length - 1)]!;
      state.calls++;
      await onProbe(state.calls);
      return verdict;
    };
    return { probe, state };
  }

  it.each<[string, ProbeVerdict[], number]>([
    ['the address gives no answer after the drop (cut off)', ['accepted', 'unknown'], 6],
    ['the attempts after a refusal are accepted', ['accepted', 'refused', 'accepted'], 4],
    ['the address never accepted (nothing to compare a refusal with)', ['refused'], 1],
  ])('keeps the session when %s', async (_case, verdicts, probes) => {
    const { probe, state } = scripted(verdicts);
    const liveness = new SessionLiveness(fixture.admin.context, { ...FAST, armAttempts: 1 }, probe);
    const owner = await ownerAt('owner.example:6650');
    const call = new AbortController();
    await armedState(liveness.watch(owner.sessionId, call.signal));
    call.abort();
    await eventually(() => state.calls >= probes, { attempts: 100 });
    await liveness.close();
    expect(state.calls).toBe(probes);
    expect((await fixture.admin.getLease(TOPIC))?.instanceId).toBe('writer-1');
  });

  it.each<[string, ProbeVerdict[]]>([
    // The killed process's listening socket outlived its connection to this service for a moment.
    ['the attempt right after the drop is accepted and the next two are refused', ['accepted', 'accepted', 'refused']],
    ['attempts without an answer are followed by two refusals', ['accepted', 'unknown', 'unknown', 'refused']],
  ])('expires the session when %s', async (_case, verdicts) => {
    const { probe } = scripted(verdicts);
    const liveness = new SessionLiveness(fixture.admin.context, FAST, probe);
    const owner = await ownerAt('owner.example:6650');
    const call = new AbortController();
    expect(await armedState(liveness.watch(owner.sessionId, call.signal))).toBe(true);
    call.abort();
    await eventually(async () => (await fixture.admin.getLease(TOPIC)) === undefined, { attempts: 100 });
    await liveness.close();
  });

  it.each([
    ['keeps the session when keep-alives keep landing while the drop is judged', 2, 1 + 3 * 2, 'writer-1'],
    ['judges again, and expires, when one keep-alive landed during the first round', 2, 1 + 2 * 2, undefined],
  ])('%s', async (_case, firstKeepAlive, probes, holder) => {
    const owner = { sessionId: '' };
    const keepAliveFrom = firstKeepAlive as number;
    // Keep-alives land as the drop is judged; in the second case only the one sent just before the end.
    const { probe, state } = scripted(['accepted', 'refused'], async (call) => {
      if (call >= keepAliveFrom && (holder !== undefined || call === keepAliveFrom))
        await fixture.admin.keepAliveOwner(owner.sessionId);
    });
    const liveness = new SessionLiveness(fixture.admin.context, FAST, probe);
    owner.sessionId = (await ownerAt('owner.example:6650')).sessionId;
    const call = new AbortController();
    expect(await armedState(liveness.watch(owner.sessionId, call.signal))).toBe(true);
    call.abort();
    await eventually(() => state.calls >= (probes as number), { attempts: 100 });
    await liveness.close();
    expect(state.calls).toBe(probes);
    expect((await fixture.admin.getLease(TOPIC))?.instanceId).toBe(holder);
  });

  it('refuses to watch a session that is not live', async () => {
    const liveness = new SessionLiveness(fixture.admin.context, FAST);
    const stream = liveness.watch('00000000-0000-0000-0000-000000000009', new AbortController().signal);
    expect(await failure(stream[Symbol.asyncIterator]().next())).toMatchObject({ reason: 'SESSION_EXPIRED' });
  });
});

describe('owner load reports', () => {
  let fixture: SqliteFixture;
  beforeEach(() => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
  });
  afterEach(async () => {
    await fixture.close();
  });

  const report = {
    topicsOwned: 3,
    messagesInPerSecond: 120.5,
    bytesInPerSecond: 4096,
    messagesOutPerSecond: 60,
    bytesOutPerSecond: 2048,
    consumers: 2,
    pendingEntries: 7n,
    storageBytes: 5_000_000n,
    cpuShare: 0.25,
    intervalMs: 3_000n,
    busiestTopics: [{ topic: 'persistent://a/b/t', messagesPerSecond: 100 }],
  };

  it('stores the load of the last keep-alive with the owner and lists it', async () => {
    const { admin } = fixture;
    const session = await admin.registerOwner(
      { instanceId: 'w1', role: 'writer', group: 'default', advertisedAddress: 'w1:1' },
      60_000,
    );
    expect((await admin.listOwners(''))[0]?.load).toBeUndefined();
    await admin.keepAliveOwner(session.sessionId, loadRecord(report as never));
    const [listed] = await admin.listOwners('');
    expect(listed?.load).toEqual({ ...report, pendingEntries: 7, storageBytes: 5_000_000, intervalMs: 3_000 });
    expect(listed?.loadReportedAtMs).toBeGreaterThan(0);
    // A keep-alive without a load keeps the last report.
    await admin.keepAliveOwner(session.sessionId);
    expect((await admin.listOwners(''))[0]?.load?.topicsOwned).toBe(3);
  });

  it("takes storage bytes past the rates' bound (petabytes), up to what a number counts exactly", () => {
    expect(loadRecord({ ...report, storageBytes: 2n * 10n ** 15n } as never).storageBytes).toBe(2e15);
  });

  it.each([
    ['cpuShare', Number.NaN],
    ['bytesInPerSecond', -1],
    ['messagesOutPerSecond', Number.POSITIVE_INFINITY],
    ['pendingEntries', -5n],
    ['storageBytes', -1n],
    ['storageBytes', 2n ** 53n],
  ])('refuses a load whose %s is %p', (field, value) => {
    expect(() => loadRecord({ ...report, [field]: value } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'INVALID_OWNER_LOAD' }),
    );
  });

  it.each([
    ['a rate that is not a number', [{ topic: 'persistent://a/b/t', messagesPerSecond: Number.NaN }]],
    ['an empty topic name', [{ topic: '', messagesPerSecond: 1 }]],
    ['a topic name too long to be one', [{ topic: 'x'.repeat(1_025), messagesPerSecond: 1 }]],
    ['65 topics', Array.from({ length: 65 }, (_, i) => ({ topic: `t${i}`, messagesPerSecond: 1 }))],
  ])('refuses busiest topics with %s', (_case, busiestTopics) => {
    expect(() => loadRecord({ ...report, busiestTopics } as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'INVALID_OWNER_LOAD' }),
    );
  });
});
