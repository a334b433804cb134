import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from './config.js';
import type { AppendResult } from './entry.js';
import { ManagedLedger } from './managed-ledger.js';
import { payloadOf, testBackends, textOf, type TestBackends } from './testing/fixtures.js';
import { InMemoryLedgerStore } from './testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/orders/events';

const fastConfig: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 10,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 4,
  // Keep consumed data: these tests have no cursors, and retention 0 would trim every closed ledger.
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

async function open(backends: TestBackends, config: ManagedLedgerConfigInput = fastConfig) {
  return ManagedLedger.open(TOPIC, backends.deps(), { config });
}

async function readAll(ml: ManagedLedger) {
  const first = ml.ledgers()[0];
  if (first === undefined) return [];
  const out = [];
  let from = { ledgerId: first.ledgerId, entryId: 0 };
  for (let page = 0; page < 1000; page++) {
    const entries = await ml.readEntries(from, { maxEntries: 7 });
    if (entries.length === 0) break;
    out.push(...entries);
    const last = entries[entries.length - 1]!.position;
    from = { ledgerId: last.ledgerId, entryId: last.entryId + 1 };
  }
  return out;
}

/** Checks that acknowledged appends have contiguous offsets in order. */
function expectContiguous(results: AppendResult[], startOffset = 0) {
  let next = startOffset;
  for (const r of results) {
    expect(r.firstOffset).toBe(next);
    next = r.lastOffset + 1;
  }
}

describe('ManagedLedger appends and reads', () => {
  it('appends with continuous offsets and reads everything back across rollovers', async () => {
    const backends = testBackends();
    const ml = await open(backends);
    const results: AppendResult[] = [];
    for (let i = 0; i < 45; i++) results.push(await ml.append(payloadOf(`m${i}`), (i % 3) + 1));
    expectContiguous(results);
    expect(ml.ledgers().length).toBeGreaterThanOrEqual(5);
    const entries = await readAll(ml);
    expect(entries.map((e) => textOf(e.payload))).toEqual(results.map((_, i) => `m${i}`));
    expect(entries.map((e) => [e.firstOffset, e.lastOffset, e.numMessages])).toEqual(
      results.map((r, i) => [r.firstOffset, r.lastOffset, (i % 3) + 1]),
    );
    expect(entries.map((e) => e.position)).toEqual(results.map((r) => r.position));
    await ml.close();
  });

  it('pipelines many appends and acknowledges them in order', async () => {
    const store = new InMemoryLedgerStore();
    store.appendDelayMs = 1;
    const backends = testBackends({ ledgerStore: store });
    const ml = await open(backends, { ...fastConfig, maxEntriesPerLedger: 1000 });
    const order: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 300 }, (_, i) => ml.append(payloadOf(`p${i}`)).then((r) => (order.push(i), r))),
    );
    expect(order).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expectContiguous(results);
    // Group commit: far fewer store writes than appends.
    expect(store.appendCalls).toBeLessThan(100);
    await ml.close();
  });

  it('reads from the cache for tailing readers and waits for new entries', async () => {
    const store = new InMemoryLedgerStore();
    const backends = testBackends({ ledgerStore: store });
    const ml = await open(backends, { ...fastConfig, maxEntriesPerLedger: 1000 });
    const first = await ml.append(payloadOf('a'));
    const readsBefore = store.readCalls;
    expect((await ml.readEntries(first.position)).map((e) => textOf(e.payload))).toEqual(['a']);
    expect(store.readCalls).toBe(readsBefore);
    const waiting = ml.readEntriesOrWait({ ledgerId: first.position.ledgerId, entryId: 1 }, { timeoutMs: 5_000 });
    await ml.append(payloadOf('b'));
    expect((await waiting).map((e) => textOf(e.payload))).toEqual(['b']);
    expect(await ml.readEntriesOrWait({ ledgerId: first.position.ledgerId, entryId: 2 }, { timeoutMs: 5 })).toEqual([]);
    await ml.close();
  });

  it('reads old entries from the store in pages sized by the byte limit, not whole pages of entries', async () => {
    const store = new InMemoryLedgerStore();
    // No cache: every entry is old, as for a reader catching up on a backlog larger than the cache.
    const ml = await open(testBackends({ ledgerStore: store }), {
      ...fastConfig,
      maxEntriesPerLedger: 1000,
      entryCacheMaxBytes: 0,
    });
    const first = await ml.append(new Uint8Array(1000));
    for (let i = 1; i < 200; i++) await ml.append(new Uint8Array(1000));
    const [readsBefore, entriesBefore] = [store.readCalls, store.entriesRead];
    const read = await ml.readEntries(first.position, { maxEntries: 500, maxBytes: 2500 });
    expect(read.map((entry) => entry.position.entryId)).toEqual([0, 1]);
    // One round trip that brings what the limit allows and an entry more, where the whole page (200) came before.
    expect(store.readCalls - readsBefore).toBe(1);
    expect(store.entriesRead - entriesBefore).toBeLessThanOrEqual(4);
    await ml.close();
  });

  it('takes read limits as readEntries(from, maxEntries, maxBytes) too', async () => {
    const ml = await open(testBackends(), { ...fastConfig, maxEntriesPerLedger: 1000 });
    const first = await ml.append(payloadOf('aaaa'));
    for (const text of ['bbbb', 'cccc', 'dddd']) await ml.append(payloadOf(text));
    expect((await ml.readEntries(first.position, 2)).map((e) => textOf(e.payload))).toEqual(['aaaa', 'bbbb']);
    // The byte limit stops after the entry that reaches it; one entry always comes back.
    expect((await ml.readEntries(first.position, 10, 1)).map((e) => textOf(e.payload))).toEqual(['aaaa']);
    await expect(ml.readEntries(first.position, 0, 100)).rejects.toMatchObject({ reason: 'INVALID_READ_LIMITS' });
    await ml.close();
  });

  it('refuses bad input with INVALID_ARGUMENT instead of crashing', async () => {
    const ml = await open(testBackends());
    await expect(ml.append('x' as never)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_PAYLOAD',
    });
    await expect(ml.append(payloadOf('x'), 0)).rejects.toMatchObject({ reason: 'INVALID_NUM_MESSAGES' });
    await expect(ml.append(new Uint8Array(6 * 1024 * 1024))).rejects.toMatchObject({ reason: 'ENTRY_TOO_LARGE' });
    await expect(ml.readEntries({ ledgerId: -1, entryId: 0 })).rejects.toMatchObject({ reason: 'INVALID_POSITION' });
    await expect(ml.readEntries({ ledgerId: 1, entryId: 0 }, { maxEntries: 0 })).rejects.toMatchObject({
      reason: 'INVALID_READ_LIMITS',
    });
    await expect(ml.findPosition(-3)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await ml.close();
  });

  it('bounds pending appends', async () => {
    const store = new InMemoryLedgerStore();
    store.appendDelayMs = 5;
    const ml = await open(testBackends({ ledgerStore: store }), { ...fastConfig, maxPendingAppends: 3 });
    const accepted = [ml.append(payloadOf('1')), ml.append(payloadOf('2')), ml.append(payloadOf('3'))];
    await expect(ml.append(payloadOf('4'))).rejects.toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
    await Promise.all(accepted);
    await ml.close();
  });
});

describe('ManagedLedger lookups', () => {
  it('finds a position by offset and by time in at most one storage read', async () => {
    const store = new InMemoryLedgerStore();
    const backends = testBackends({ ledgerStore: store });
    const ml = await open(backends, { ...fastConfig, maxEntriesPerLedger: 50, offsetIndexIntervalEntries: 8 });
    const results: AppendResult[] = [];
    const times: number[] = [];
    for (let i = 0; i < 180; i++) {
      backends.clock.advance(10);
      times.push(backends.clock.nowMs);
      results.push(await ml.append(payloadOf(`e${i}`), (i % 4) + 1));
    }
    for (const [i, r] of results.entries()) {
      for (const offset of [r.firstOffset, r.lastOffset]) {
        const before = store.readCalls;
        const found = await ml.findPosition(offset);
        expect(store.readCalls - before).toBeLessThanOrEqual(1);
        expect({ ledgerId: found.ledgerId, entryId: found.entryId }).toEqual(r.position);
        expect(found.offset).toBe(offset);
      }
      const before = store.readCalls;
      const byTime = await ml.findPositionByTime(times[i]!);
      expect(store.readCalls - before).toBeLessThanOrEqual(1);
      expect({ ledgerId: byTime.ledgerId, entryId: byTime.entryId }).toEqual(r.position);
    }
    const past = await ml.findPosition(results[results.length - 1]!.lastOffset + 1);
    expect(past.pastEnd).toBe(true);
    await ml.close();
  });
});

describe('ManagedLedger restart and fencing', () => {
  it('continues offsets after a clean close and reopen', async () => {
    const backends = testBackends();
    const first = await open(backends);
    const before: AppendResult[] = [];
    for (let i = 0; i < 13; i++) before.push(await first.append(payloadOf(`a${i}`), 2));
    await first.close();
    const second = await open(backends);
    const after = await second.append(payloadOf('b'), 3);
    expect(after.firstOffset).toBe(before[before.length - 1]!.lastOffset + 1);
    expect((await readAll(second)).map((e) => textOf(e.payload))).toEqual([...before.map((_, i) => `a${i}`), 'b']);
    await second.close();
  });

  it('a second open fences the first: its pending and later appends fail, acknowledged entries survive', async () => {
    const store = new InMemoryLedgerStore();
    store.appendDelayMs = 2;
    const backends = testBackends({ ledgerStore: store });
    const first = await open(backends, { ...fastConfig, maxEntriesPerLedger: 1000, maxWriteBatchEntries: 5 });
    const acknowledged: AppendResult[] = [];
    const outcomes = Array.from({ length: 60 }, (_, i) =>
      first.append(payloadOf(`x${i}`)).then(
        (r) => (acknowledged.push(r), 'ok'),
        (err: unknown) => (err as LedgerlineError).reason,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 6));
    const second = await open(backends);
    const reasons = await Promise.all(outcomes);
    expect(reasons).toContain('LEDGER_FENCED');
    expect(new Set(reasons.filter((r) => r !== 'ok'))).toEqual(new Set(['LEDGER_FENCED']));
    // Acknowledged appends form a prefix: nothing after a failure was acknowledged.
    expect(reasons.slice(0, acknowledged.length).every((r) => r === 'ok')).toBe(true);
    await expect(first.append(payloadOf('late'))).rejects.toMatchObject({ code: 'ABORTED', reason: 'LEDGER_FENCED' });
    expect(first.state).toBe('fenced');
    const survivors = await readAll(second);
    expect(survivors.map((e) => textOf(e.payload))).toEqual(acknowledged.map((_, i) => `x${i}`));
    const next = await second.append(payloadOf('new'));
    expect(next.firstOffset).toBe(acknowledged.length);
    await first.close();
    await second.close();
  });

  it('an owner whose metadata write loses to another owner is fenced with MANAGED_LEDGER_FENCED', async () => {
    const backends = testBackends();
    const first = await open(backends);
    for (let i = 0; i < 3; i++) await first.append(payloadOf(`a${i}`));
    // Another owner rewrites the node (it would fence the ledger too; here only the metadata moves).
    const node = await backends.metadataStore.get(first.path);
    await backends.metadataStore.put(first.path, node!.value, { expectedVersion: node!.version });
    for (let i = 3; i < 12; i++) await first.append(payloadOf(`a${i}`)).catch(() => undefined);
    expect(first.state).toBe('fenced');
    await expect(first.append(payloadOf('x'))).rejects.toMatchObject({
      code: 'ABORTED',
      reason: 'MANAGED_LEDGER_FENCED',
    });
    await first.close();
  });
});

describe('ManagedLedger ledger-store failures', () => {
  it.each([['before'], ['after']] as const)(
    'a write failing %s it is stored rolls to a new ledger and nothing is lost or duplicated',
    async (mode) => {
      const store = new InMemoryLedgerStore();
      store.appendDelayMs = 1;
      const ml = await open(testBackends({ ledgerStore: store }), { ...fastConfig, maxEntriesPerLedger: 1000 });
      const warmup = await ml.append(payloadOf('w'));
      store.appendFaults.push(mode);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ml.append(payloadOf(`f${i}`))));
      const tail = await ml.append(payloadOf('t'));
      expectContiguous([warmup, ...results, tail]);
      // The failed ledger was sealed; writing went on in a new one.
      expect(tail.position.ledgerId).not.toBe(warmup.position.ledgerId);
      expect(ml.ledgers().length).toBe(2);
      const all = await readAll(ml);
      expect(all.map((e) => textOf(e.payload))).toEqual(['w', ...results.map((_, i) => `f${i}`), 't']);
      expect(all.map((e) => e.firstOffset)).toEqual([warmup, ...results, tail].map((r) => r.firstOffset));
      await ml.close();
    },
  );

  it('tries a failing write writeRetryMaxAttempts times in all, the first try included, before it gives up', async () => {
    const store = new InMemoryLedgerStore();
    const ml = await open(testBackends({ ledgerStore: store }), { ...fastConfig, writeRetryMaxAttempts: 4 });
    await ml.append(payloadOf('ok'));
    let refused = 0;
    const checkUp = (store as unknown as { checkUp: (what: string) => void }).checkUp.bind(store);
    jest.spyOn(store as unknown as { checkUp: (what: string) => void }, 'checkUp').mockImplementation((what) => {
      if (store.down) refused++;
      checkUp(what);
    });
    store.down = true;
    await expect(ml.append(payloadOf('lost'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(refused).toBe(4);
    store.down = false;
    await ml.close();
  });

  it('fails pending appends with UNAVAILABLE after the retries run out, and recovers afterwards', async () => {
    const store = new InMemoryLedgerStore();
    const ml = await open(testBackends({ ledgerStore: store }), { ...fastConfig, writeRetryMaxAttempts: 3 });
    await ml.append(payloadOf('ok'));
    store.down = true;
    // Its write got no answer: in doubt, not a reason that says it is not in the log.
    await expect(ml.append(payloadOf('lost'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      reason: 'APPEND_OUTCOME_UNKNOWN',
    });
    store.down = false;
    const after = await ml.append(payloadOf('after'));
    expect(after.firstOffset).toBe(1);
    expect((await readAll(ml)).map((e) => textOf(e.payload))).toEqual(['ok', 'after']);
    await ml.close();
  });
});
