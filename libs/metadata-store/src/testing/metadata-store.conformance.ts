import { decodeMetadataChange, InProcessBus, metadataTreePattern, type BusSubscription } from '@ledgerline/bus';
import { LedgerlineError } from '@ledgerline/errors';
import { eventually, uniqueNamespace } from '@ledgerline/testing';
import type { MetadataChange, MetadataStore } from '../store.js';
import type { MetadataStoreBackend } from './metadata-store-backend.js';
import { casHistoriesAreLinearizable } from './cas-linearizability.conformance.js';
import { BULK_CALLS_IN_FLIGHT, documentedLimitsAreEnforced } from './documented-limits.conformance.js';
import { expiredNodesStayGone } from './session-expiry.conformance.js';
import { storeAgreesWithModel } from './store-model.conformance.js';

/**
 * A session that cannot lapse while a test runs, even when a busy machine keeps the
 * renewal timer from firing for seconds: for tests about what happens while it lives.
 */
const OUTLIVES_TEST_TTL_MS = 60_000;
/** Long enough that a stalled event loop on a busy machine does not let the session lapse between renewals. */
const RENEWED_TTL_MS = 3_000;

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | undefined) => (value === undefined ? undefined : new TextDecoder().decode(value));

/** Writes many nodes with bounded concurrency: batches of `batchSize` puts in flight at once. */
export async function putMany(
  store: MetadataStore,
  paths: string[],
  value: Uint8Array,
  batchSize = BULK_CALLS_IN_FLIGHT,
): Promise<void> {
  for (let start = 0; start < paths.length; start += batchSize) {
    await Promise.all(paths.slice(start, start + batchSize).map((path) => store.put(path, value)));
  }
}

/** Reads up to `count` metadata changes from a subscription, bounded by a guard time. */
async function changes(subscription: BusSubscription, count: number): Promise<MetadataChange[]> {
  const iterator = subscription[Symbol.asyncIterator]();
  const found: MetadataChange[] = [];
  while (found.length < count) {
    let timer: NodeJS.Timeout | undefined;
    const guard = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), 5000)));
    const next = await Promise.race([iterator.next(), guard]);
    clearTimeout(timer);
    if (next === 'timeout' || next.done === true) break;
    found.push(decodeMetadataChange(next.value.data));
  }
  return found;
}

function settleAll<T>(promises: Promise<T>[]) {
  return Promise.allSettled(promises).then((results) => ({
    won: results.filter((r): r is PromiseFulfilledResult<Awaited<T>> => r.status === 'fulfilled').map((r) => r.value),
    lost: results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown),
  }));
}

function expectBadVersion(errors: unknown[]): void {
  for (const error of errors) {
    expect(error).toBeInstanceOf(LedgerlineError);
    expect(error).toMatchObject({ code: 'ABORTED', reason: 'BAD_VERSION' });
  }
}

/** The one suite every MetadataStore backend passes. */
export function metadataStoreConformance(backend: MetadataStoreBackend): void {
  describe(`MetadataStore conformance: ${backend.name}`, () => {
    let bus: InProcessBus;
    let store: MetadataStore;
    let other: MetadataStore;
    let root: string;

    beforeAll(async () => {
      await backend.setup();
      bus = new InProcessBus();
      store = await backend.open({ bus, maxValueBytes: 64 * 1024, sessionSweepIntervalMs: 100 });
      other = await backend.open({ bus, sessionSweepIntervalMs: 100 });
      root = `/${uniqueNamespace('ms')}`;
    });

    afterAll(async () => {
      await store.close();
      await other.close();
      await bus.close();
      await backend.teardown();
    });

    basics(() => ({ store, other, root, backend }));
    compareAndSet(() => ({ store, other, root }));
    listing(() => ({ store, root }));
    sessions(() => ({ store, other, root, backend, bus }));
    sessionSweeps(() => ({ store, other, root, backend, bus }));
    sequences(() => ({ store, other, root }));
    badInput(() => ({ store, root }));
    notifications(() => ({ store, root, bus }));
    storeAgreesWithModel(() => ({ store, root }));
    casHistoriesAreLinearizable(() => ({ backend, root }));
    expiredNodesStayGone(() => ({ backend, root }));
    documentedLimitsAreEnforced(() => ({ backend, root }));
  });
}

interface Context {
  store: MetadataStore;
  other: MetadataStore;
  root: string;
  backend: MetadataStoreBackend;
  bus: InProcessBus;
}

function basics(context: () => Pick<Context, 'store' | 'other' | 'root' | 'backend'>): void {
  it('creates, reads, updates and deletes a node with versions and times', async () => {
    const { store, other, root } = context();
    const path = `${root}/basic`;
    expect(await store.get(path)).toBeUndefined();
    expect(await store.exists(path)).toBe(false);
    expect(await store.put(path, bytes('one'))).toBe(1);
    const first = await other.get(path);
    expect(text(first?.value)).toBe('one');
    expect(first).toMatchObject({ version: 1 });
    expect(first?.ephemeralSessionId).toBeUndefined();
    expect(first?.modifiedAtMs).toBe(first?.createdAtMs);
    expect(await other.put(path, bytes('two'))).toBe(2);
    const second = await store.get(path);
    expect(second).toMatchObject({ version: 2, createdAtMs: first?.createdAtMs });
    expect(second?.modifiedAtMs).toBeGreaterThanOrEqual(first?.modifiedAtMs ?? 0);
    expect(await store.exists(path)).toBe(true);
    await store.delete(path);
    expect(await other.get(path)).toBeUndefined();
    await store.delete(path);
    expect(await store.put(path, bytes('again'))).toBe(1);
  });

  it('keeps apart nodes whose parent and name could be confused', async () => {
    const { store, root } = context();
    const paths = [`${root}/a}:node:b/c`, `${root}/a/b}:node:c`, `${root}/a%7D/x`, `${root}/a}/x`, `${root}/{a}/x`];
    await Promise.all(paths.map((path) => store.put(path, bytes(path))));
    for (const path of paths) expect(text((await store.get(path))?.value)).toBe(path);
    expect((await store.children(`${root}/a`)).names).toEqual(['b}:node:c']);
    expect((await store.children(`${root}/a}`)).names).toEqual(['x']);
  });

  it('keeps binary values byte for byte, the empty value included', async () => {
    const { store, root } = context();
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    await store.put(`${root}/binary`, binary);
    expect([...((await store.get(`${root}/binary`))?.value ?? [])]).toEqual([...binary]);
    await store.put(`${root}/empty`, new Uint8Array(0));
    expect((await store.get(`${root}/empty`))?.value.byteLength).toBe(0);
  });

  it('fails fast with STORE_CLOSED after close', async () => {
    const { backend, root } = context();
    const closing = await backend.open();
    await closing.put(`${root}/closing`, bytes('v'));
    await closing.close();
    await closing.close();
    await expect(closing.get(`${root}/closing`)).rejects.toMatchObject({ reason: 'STORE_CLOSED' });
    await expect(closing.put(`${root}/closing`, bytes('v'))).rejects.toMatchObject({ reason: 'STORE_CLOSED' });
    await expect(closing.openSession({ ttlMs: 1000 })).rejects.toMatchObject({ reason: 'STORE_CLOSED' });
  });
}

function compareAndSet(context: () => Pick<Context, 'store' | 'other' | 'root'>): void {
  it('applies a put or delete only at the expected version', async () => {
    const { store, root } = context();
    const path = `${root}/cas`;
    await expect(store.put(path, bytes('x'), { expectedVersion: 1 })).rejects.toMatchObject({ reason: 'BAD_VERSION' });
    expect(await store.put(path, bytes('a'), { expectedVersion: 'absent' })).toBe(1);
    await expect(store.put(path, bytes('b'), { expectedVersion: 'absent' })).rejects.toMatchObject({
      code: 'ABORTED',
      reason: 'BAD_VERSION',
    });
    expect(await store.put(path, bytes('b'), { expectedVersion: 1 })).toBe(2);
    await expect(store.put(path, bytes('c'), { expectedVersion: 1 })).rejects.toMatchObject({ reason: 'BAD_VERSION' });
    await expect(store.delete(path, { expectedVersion: 1 })).rejects.toMatchObject({ reason: 'BAD_VERSION' });
    expect(text((await store.get(path))?.value)).toBe('b');
    await store.delete(path, { expectedVersion: 2 });
    await expect(store.delete(path, { expectedVersion: 2 })).rejects.toMatchObject({ reason: 'BAD_VERSION' });
  });

  it('lets exactly one of 50 concurrent writers win on one version', async () => {
    const { store, other, root } = context();
    const path = `${root}/race`;
    const version = await store.put(path, bytes('start'));
    const writers = Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? store : other).put(path, bytes(`writer-${i}`), { expectedVersion: version }),
    );
    const { won, lost } = await settleAll(writers);
    expect(won).toEqual([version + 1]);
    expect(lost).toHaveLength(49);
    expectBadVersion(lost);
    expect((await store.get(path))?.version).toBe(version + 1);
  });

  it('lets exactly one of 50 concurrent creators create a node', async () => {
    const { store, other, root } = context();
    const path = `${root}/create-race`;
    const creators = Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? store : other).put(path, bytes(`creator-${i}`), { expectedVersion: 'absent' }),
    );
    const { won, lost } = await settleAll(creators);
    expect(won).toEqual([1]);
    expectBadVersion(lost);
  });

  it('lets exactly one of 50 concurrent deleters delete at one version', async () => {
    const { store, other, root } = context();
    const path = `${root}/delete-race`;
    const version = await store.put(path, bytes('doomed'));
    const deleters = Array.from({ length: 50 }, (_, i) =>
      (i % 2 === 0 ? store : other).delete(path, { expectedVersion: version }),
    );
    const { won, lost } = await settleAll(deleters);
    expect(won).toHaveLength(1);
    expectBadVersion(lost);
  });
}

function listing(context: () => Pick<Context, 'store' | 'root'>): void {
  it('lists immediate children in byte order, without grandchildren or deleted nodes', async () => {
    const { store, root } = context();
    const parent = `${root}/list`;
    const names = ['b', 'a', 'A', 'z-1', 'é', '日本', '😀', 'a.b', '%20'];
    await putMany(store, [...names.map((n) => `${parent}/${n}`), `${parent}/a/grandchild`], bytes('v'));
    await store.put(`${parent}/gone`, bytes('v'));
    await store.delete(`${parent}/gone`);
    const page = await store.children(parent);
    const byteOrder = [...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(page).toEqual({ names: byteOrder });
    expect(await store.exists(parent)).toBe(false);
    expect((await store.children(`${parent}/a`)).names).toEqual(['grandchild']);
    expect((await store.children(`${parent}/missing`)).names).toEqual([]);
    expect((await store.children('/')).names).not.toContain(root.slice(1));
    await store.put(root, bytes('the test root'));
    expect((await store.children('/')).names).toContain(root.slice(1));
  });

  it('pages through 100,000 children in order without gaps or repeats', async () => {
    const { store, root } = context();
    const parent = `${root}/many`;
    const count = 100_000;
    const names = Array.from({ length: count }, (_, i) => `child-${String(i).padStart(6, '0')}`);
    await putMany(
      store,
      names.map((name) => `${parent}/${name}`),
      bytes('x'),
    );
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages <= count / 5000 + 1; pages++) {
      const page = await store.children(parent, after === undefined ? { limit: 5000 } : { after, limit: 5000 });
      seen.push(...page.names);
      if (page.next === undefined) break;
      expect(page.names).toHaveLength(5000);
      after = page.next;
    }
    expect(seen).toHaveLength(count);
    expect(seen).toEqual(names);
    const middle = await store.children(parent, { after: names[49_999] as string, limit: 2 });
    expect(middle).toEqual({ names: [names[50_000], names[50_001]], next: names[50_001] });
  }, 180_000);
}

function sequences(context: () => Pick<Context, 'store' | 'other' | 'root'>): void {
  it('hands out unique, increasing ids under concurrency, from 1', async () => {
    const { store, other, root } = context();
    const sequence = `${root}-ledger-ids`;
    const ids = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? store : other).nextId(sequence)),
    );
    expect(new Set(ids).size).toBe(200);
    expect(Math.min(...ids)).toBe(1);
    let last = Math.max(...ids);
    for (let i = 0; i < 20; i++) {
      const id = await (i % 2 === 0 ? other : store).nextId(sequence);
      expect(id).toBeGreaterThan(last);
      last = id;
    }
    expect(await store.nextId(`${sequence}-other`)).toBe(1);
  });
}

function badInput(context: () => Pick<Context, 'store' | 'root'>): void {
  it('rejects bad paths with INVALID_ARGUMENT on every call', async () => {
    const { store } = context();
    const badPaths = ['', 'relative', '/trailing/', '//double', '/a//b', '/./a', '/a/..', '/nul\u0000', '/\ud800x', 7];
    for (const path of badPaths as string[]) {
      for (const call of [
        () => store.get(path),
        () => store.exists(path),
        () => store.put(path, bytes('v')),
        () => store.delete(path),
        () => store.children(path),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'BAD_PATH' });
      }
    }
    await expect(store.get(`/${'x'.repeat(1024)}`)).rejects.toMatchObject({ reason: 'PATH_TOO_LONG' });
    await expect(store.put('/', bytes('v'))).rejects.toMatchObject({ reason: 'PATH_IS_ROOT' });
    await expect(store.delete('/')).rejects.toMatchObject({ reason: 'PATH_IS_ROOT' });
    expect(await store.get('/')).toBeUndefined();
  });

  it('accepts values up to the limit and refuses larger ones with RESOURCE_EXHAUSTED', async () => {
    const { store, root } = context();
    expect(await store.put(`${root}/max`, new Uint8Array(64 * 1024))).toBe(1);
    await expect(store.put(`${root}/over`, new Uint8Array(64 * 1024 + 1))).rejects.toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      reason: 'VALUE_TOO_LARGE',
    });
    expect(await store.exists(`${root}/over`)).toBe(false);
    await expect(store.put(`${root}/str`, 'text' as never)).rejects.toMatchObject({ reason: 'BAD_VALUE' });
  });

  it('rejects bad versions, page sizes, sequence names and TTLs', async () => {
    const { store, root } = context();
    for (const expectedVersion of [0, -1, 1.5, 'present']) {
      await expect(store.put(`${root}/v`, bytes('v'), { expectedVersion } as never)).rejects.toMatchObject({
        reason: 'BAD_EXPECTED_VERSION',
      });
    }
    await expect(store.delete(`${root}/v`, { expectedVersion: 'absent' } as never)).rejects.toMatchObject({
      reason: 'BAD_EXPECTED_VERSION',
    });
    for (const limit of [0, 10_001, 2.5]) {
      await expect(store.children(root, { limit })).rejects.toMatchObject({ reason: 'BAD_PAGE_SIZE' });
    }
    await expect(store.children(root, { after: 'a/b' })).rejects.toMatchObject({ reason: 'BAD_PAGE_TOKEN' });
    for (const name of ['', 'x'.repeat(257), 'tab\t']) {
      await expect(store.nextId(name)).rejects.toMatchObject({ reason: 'BAD_SEQUENCE_NAME' });
    }
    for (const ttlMs of [0, 249, 600_001, 1000.5]) {
      await expect(store.openSession({ ttlMs })).rejects.toMatchObject({ reason: 'BAD_SESSION_TTL' });
    }
  });
}

function notifications(context: () => Pick<Context, 'store' | 'root' | 'bus'>): void {
  it('publishes a change for every successful write and none for a failed one', async () => {
    const { store, root, bus } = context();
    const path = `${root}/watched/node`;
    const subscription = bus.subscribe(metadataTreePattern(`${root}/watched`));
    await store.put(path, bytes('1'));
    await expect(store.put(path, bytes('x'), { expectedVersion: 'absent' })).rejects.toMatchObject({
      reason: 'BAD_VERSION',
    });
    await store.put(path, bytes('2'), { expectedVersion: 1 });
    await store.delete(`${path}-missing`);
    await store.delete(path);
    expect(await changes(subscription, 3)).toEqual([
      { path, kind: 'created', version: 1 },
      { path, kind: 'modified', version: 2 },
      { path, kind: 'deleted', version: 0 },
    ]);
    subscription.unsubscribe();
  });
}

function sessions(context: () => Context): void {
  it('removes ephemeral nodes when their session closes, and announces it', async () => {
    const { store, other, root, bus } = context();
    const path = `${root}/eph/closed`;
    const subscription = bus.subscribe(metadataTreePattern(`${root}/eph`));
    // A TTL this test cannot outlive: it is about closing, and a 1 s session expired before its first put on a busy machine.
    const session = await store.openSession({ ttlMs: OUTLIVES_TEST_TTL_MS });
    expect(await store.put(path, bytes('mine'), { session, expectedVersion: 'absent' })).toBe(1);
    expect((await other.get(path))?.ephemeralSessionId).toBe(session.id);
    expect((await other.children(`${root}/eph`)).names).toEqual(['closed']);
    await session.close();
    expect(session.expired).toBe(true);
    expect(await other.get(path)).toBeUndefined();
    expect((await other.children(`${root}/eph`)).names).toEqual([]);
    expect(await changes(subscription, 2)).toEqual([
      { path, kind: 'created', version: 1 },
      { path, kind: 'deleted', version: 0 },
    ]);
    await expect(store.put(path, bytes('late'), { session })).rejects.toMatchObject({ reason: 'SESSION_EXPIRED' });
    subscription.unsubscribe();
  });

  it('keeps ephemeral nodes while the session is renewed, and refuses a session of another client', async () => {
    const { store, other, root } = context();
    const session = await store.openSession({ ttlMs: RENEWED_TTL_MS });
    await store.put(`${root}/eph/kept`, bytes('v'), { session });
    // Renewed every third of its TTL: the fourth renewal happens after the TTL it was opened
    // with has run out, so the node is only still there because the renewals reached the store.
    await eventually(() => session.renewals >= 4 || session.expired, {
      attempts: 1000,
      description: 'four renewals of the session',
    });
    expect(session.expired).toBe(false);
    expect(await other.exists(`${root}/eph/kept`)).toBe(true);
    await expect(other.put(`${root}/eph/foreign`, bytes('v'), { session })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'FOREIGN_SESSION',
    });
    await store.put(`${root}/eph/kept`, bytes('now persistent'));
    await session.close();
    expect(text((await other.get(`${root}/eph/kept`))?.value)).toBe('now persistent');
  });

  it('lets ephemeral nodes vanish after the TTL when their owner dies, then frees the path', async () => {
    const { other, root, backend, bus } = context();
    const doomed = await backend.open({ bus, sessionSweepIntervalMs: 100 });
    const path = `${root}/eph/crashed`;
    const subscription = bus.subscribe(metadataTreePattern(`${root}/eph`));
    const session = await doomed.openSession({ ttlMs: 1000 });
    let expiredCalls = 0;
    session.onExpired(() => expiredCalls++);
    await doomed.put(path, bytes('lease'), { session, expectedVersion: 'absent' });
    expect(await other.exists(path)).toBe(true);
    await backend.crash(doomed);
    await eventually(async () => !(await other.exists(path)));
    expect((await other.children(`${root}/eph`)).names).not.toContain('crashed');
    expect(await changes(subscription, 2)).toEqual([
      { path, kind: 'created', version: 1 },
      { path, kind: 'deleted', version: 0 },
    ]);
    expect(await other.put(path, bytes('taken over'), { expectedVersion: 'absent' })).toBe(1);
    await eventually(() => session.expired && expiredCalls === 1);
    subscription.unsubscribe();
    await doomed.close().catch(() => undefined);
  });

  it('fires onExpired once when the store drops the session', async () => {
    const { store } = context();
    const session = await store.openSession({ ttlMs: OUTLIVES_TEST_TTL_MS });
    let calls = 0;
    session.onExpired(() => calls++);
    await session.close();
    expect(calls).toBe(0);
    expect(session.expired).toBe(true);
  });
}

function sessionSweeps(context: () => Context): void {
  it("removes a dead owner's nodes in many parents without anyone reading them, and announces each", async () => {
    const { root, backend, bus } = context();
    const doomed = await backend.open({ bus, sessionSweepIntervalMs: 100 });
    const paths = [`${root}/sweep/a/1`, `${root}/sweep/b/2`, `${root}/sweep/c/3`, `${root}/sweep/c/4`];
    const subscription = bus.subscribe(metadataTreePattern(`${root}/sweep`));
    const session = await doomed.openSession({ ttlMs: 1000 });
    await Promise.all(paths.map((path) => doomed.put(path, bytes('e'), { session })));
    const created = await changes(subscription, paths.length);
    expect(created.map((c) => c.kind)).toEqual(paths.map(() => 'created'));
    await backend.crash(doomed);
    const deleted = await changes(subscription, paths.length);
    expect(deleted.map((c) => c.kind)).toEqual(paths.map(() => 'deleted'));
    expect(deleted.map((c) => c.path).sort()).toEqual([...paths].sort());
    subscription.unsubscribe();
    await doomed.close().catch(() => undefined);
  });

  it('lets a new session take over a lease once the old one is gone', async () => {
    const { store, other, root } = context();
    const lease = `${root}/sweep/lease`;
    const first = await store.openSession({ ttlMs: OUTLIVES_TEST_TTL_MS });
    await store.put(lease, bytes('first'), { session: first, expectedVersion: 'absent' });
    const second = await other.openSession({ ttlMs: OUTLIVES_TEST_TTL_MS });
    await expect(
      other.put(lease, bytes('second'), { session: second, expectedVersion: 'absent' }),
    ).rejects.toMatchObject({ reason: 'BAD_VERSION' });
    await first.close();
    expect(await other.put(lease, bytes('second'), { session: second, expectedVersion: 'absent' })).toBe(1);
    expect((await store.get(lease))?.ephemeralSessionId).toBe(second.id);
    await second.close();
    expect(await store.exists(lease)).toBe(false);
  });
}
