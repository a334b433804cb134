import { SqliteLedgerStore, type LedgerStore, type LedgerWriter } from '@ledgerline/ledger-store';
import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, textOf } from '../testing/fixtures.js';
import { InMemoryLedgerStore } from '../testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/orders/group-commit';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 10_000,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 4,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

/**
 * Wraps a store so the test sees how many entries each append call carried; `answer`, when given, decides when
 * the pipeline hears each append's outcome (the store's own promise otherwise).
 */
function recordingWrites(
  inner: LedgerStore,
  answer: (stored: Promise<number>) => Promise<number> = (stored) => stored,
): { store: LedgerStore; writes: number[] } {
  const writes: number[] = [];
  const store = Object.create(inner) as LedgerStore;
  store.create = async (ledgerId, options) => {
    const writer = await inner.create(ledgerId, options);
    const recorded: LedgerWriter = {
      ledgerId: writer.ledgerId,
      append: (entries) => {
        writes.push(entries.length);
        return answer(writer.append(entries));
      },
      close: () => writer.close(),
    };
    return recorded;
  };
  return { store, writes };
}

/**
 * Wraps a store so that each append's answer waits for the test to release it (after the store has done it):
 * the test sees what the pipeline does while a write is under way and right after it is answered.
 */
function gatedWrites(inner: LedgerStore): {
  store: LedgerStore;
  writes: number[];
  stored: Promise<number>[];
  release(write: number): void;
} {
  const stored: Promise<number>[] = [];
  const gates: (() => void)[] = [];
  const { store, writes } = recordingWrites(inner, (done) => {
    stored.push(done);
    const gate = new Promise<void>((resolve) => gates.push(resolve));
    return gate.then(() => done);
  });
  return { store, writes, stored, release: (write) => gates[write]?.() };
}

/** Resolves once `done()` holds, checking once per turn; fails after 5 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Appends `count` entries, each from its own event-loop turn, as requests read off a socket arrive. */
function appendFromSeparateTurns(ml: ManagedLedger, count: number, label: string): Promise<AppendResult>[] {
  return Array.from(
    { length: count },
    (_, i) =>
      new Promise<AppendResult>((resolve, reject) =>
        setImmediate(() => ml.append(payloadOf(`${label}${i}`)).then(resolve, reject)),
      ),
  );
}

describe('ManagedLedger group commit', () => {
  it('appends arriving in separate turns share one write on a store that answers at once (SQLite)', async () => {
    const sqlite = new SqliteLedgerStore({ path: ':memory:' });
    const { store, writes } = recordingWrites(sqlite);
    const ml = await ManagedLedger.open(TOPIC, testBackends({ ledgerStore: store }).deps(), { config });
    const results = await Promise.all(appendFromSeparateTurns(ml, 50, 'g'));
    // Stored in order with contiguous offsets, every append acknowledged once.
    expect(results.map((r) => r.firstOffset)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(results.map((r) => r.position.entryId)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const stored = await ml.readEntries({ ledgerId: results[0]!.position.ledgerId, entryId: 0 }, { maxEntries: 100 });
    expect(stored.map((e) => textOf(e.payload))).toEqual(results.map((_, i) => `g${i}`));
    // One transaction per entry would be 50 writes; the pipeline waits one turn and takes them together.
    expect(writes.reduce((sum, n) => sum + n, 0)).toBe(50);
    expect(writes.length).toBeLessThanOrEqual(3);
    await ml.close();
    await sqlite.close();
  });

  it('sends the write that follows an answered one at once, with what arrived meanwhile, without waiting a turn', async () => {
    const inner = new InMemoryLedgerStore();
    const { store, writes, stored, release } = gatedWrites(inner);
    const ml = await ManagedLedger.open(TOPIC, testBackends({ ledgerStore: store }).deps(), { config });
    const first = ml.append(payloadOf('a'));
    await until(() => writes.length === 1);
    const later = [ml.append(payloadOf('b')), ml.append(payloadOf('c'))];
    await stored[0];
    // A turn's callback queued before the answer: the next write is out before it runs, where waiting for a
    // turn of its own would send it only after.
    let writesAtNextTurn = 0;
    setImmediate(() => (writesAtNextTurn = writes.length));
    release(0);
    await until(() => writesAtNextTurn > 0);
    expect(writesAtNextTurn).toBe(2);
    // The two that arrived while the first write was under way went together, after it, in order.
    expect(writes).toEqual([1, 2]);
    release(1);
    const results = await Promise.all([first, ...later]);
    expect(results.map((r) => r.firstOffset)).toEqual([0, 1, 2]);
    await ml.close();
  });

  it('keeps writing in batches past maxEntriesPerLedger while the ledger is too young to roll over', async () => {
    const sqlite = new SqliteLedgerStore({ path: ':memory:' });
    const { store, writes } = recordingWrites(sqlite);
    const young = { ...config, maxEntriesPerLedger: 10, minLedgerAgeMs: 600_000 };
    const ml = await ManagedLedger.open(TOPIC, testBackends({ ledgerStore: store }).deps(), { config: young });
    const results = await Promise.all(appendFromSeparateTurns(ml, 60, 'y'));
    // One ledger (too young to roll), every entry stored in order.
    expect(new Set(results.map((r) => r.position.ledgerId)).size).toBe(1);
    expect(results.map((r) => r.position.entryId)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // Up to the limit a batch stops where rollover would land; past it, one write per entry would be 50 writes.
    expect(writes.reduce((sum, n) => sum + n, 0)).toBe(60);
    expect(writes.length).toBeLessThanOrEqual(6);
    await ml.close();
    await sqlite.close();
  });

  it('a failed batched write fails every append in it, in the order they were made, and stores none', async () => {
    const inner = new InMemoryLedgerStore();
    const ml = await ManagedLedger.open(TOPIC, testBackends({ ledgerStore: inner }).deps(), {
      config: { ...config, writeRetryMaxAttempts: 1 },
    });
    const first = await ml.append(payloadOf('before'));
    const callsBefore = inner.appendCalls;
    inner.down = true;
    const failedOrder: number[] = [];
    const failures = Array.from({ length: 5 }, (_, i) =>
      ml.append(payloadOf(`lost${i}`)).then(
        () => 'stored',
        (error: unknown) => {
          failedOrder.push(i);
          return error;
        },
      ),
    );
    const outcomes = await Promise.all(failures);
    inner.down = false;
    // All five went in one write, and that write's failure reached each of them, oldest first.
    expect(inner.appendCalls - callsBefore).toBe(1);
    expect(failedOrder).toEqual([0, 1, 2, 3, 4]);
    // The write got no answer, so whether it landed is not known until the ledger is checked.
    for (const outcome of outcomes)
      expect(outcome).toMatchObject({ code: 'UNAVAILABLE', reason: 'APPEND_OUTCOME_UNKNOWN' });
    const after = await ml.append(payloadOf('after'));
    expect(after.firstOffset).toBe(first.lastOffset + 1);
    // Reads run across ledgers: from the first entry on, the log holds exactly what was acknowledged.
    const entries = await ml.readEntries(first.position, { maxEntries: 100 });
    expect(entries.map((e) => textOf(e.payload))).toEqual(['before', 'after']);
    await ml.close();
  });
});
