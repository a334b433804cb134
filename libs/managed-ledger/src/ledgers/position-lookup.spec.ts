import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { testBackends } from '../testing/fixtures.js';
import { InMemoryLedgerStore } from '../testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/orders/lookups';
const ENTRY_BYTES = 1000;

const config: ManagedLedgerConfigInput = {
  // Three ledgers for 250 entries: two closed (their offsets kept in memory since the rollover) and the open one.
  maxEntriesPerLedger: 100,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

/** 250 entries of 1, 2 or 3 messages: small entries, so an index point covers 64 of them. */
async function filled(store: InMemoryLedgerStore, cacheBytes: number) {
  const backends = testBackends({ ledgerStore: store });
  const ml = await ManagedLedger.open(TOPIC, backends.deps(), {
    config: { ...config, entryCacheMaxBytes: cacheBytes },
  });
  const appended: AppendResult[] = [];
  for (let i = 0; i < 250; i++) appended.push(await ml.append(new Uint8Array(ENTRY_BYTES), (i % 3) + 1));
  expect(ml.ledgers().length).toBe(3);
  return { ml, appended, backends };
}

/** Reads from offset 0 to the end as the writer owner's FetchByOffset does: findPosition, then readEntries. */
async function fetchAll(ml: ManagedLedger, maxBytes: number) {
  const read = [];
  let fetches = 0;
  for (let offset = 0; offset <= ml.lastOffset; fetches++) {
    const found = await ml.findPosition(offset);
    const entries = await ml.readEntries(found, { maxEntries: 1000, maxBytes });
    read.push(...entries);
    offset = entries.at(-1)!.lastOffset + 1;
  }
  return { read, fetches };
}

describe('finding an offset', () => {
  it('costs a catch-up by offset one store read per fetch, none to find where each fetch starts', async () => {
    const store = new InMemoryLedgerStore();
    // No cache: every entry is old, as for a reader catching up on a backlog larger than the cache.
    const { ml, appended } = await filled(store, 0);
    const readsBefore = store.readCalls;
    const { read, fetches } = await fetchAll(ml, 20 * ENTRY_BYTES);
    expect(read.map((entry) => entry.firstOffset)).toEqual(appended.map((entry) => entry.firstOffset));
    // 20 entries a fetch, in ledgers of 100: no fetch crosses a ledger, so each is one range read. Finding a
    // fetch's offset, which is seldom an index point's, read up to 64 entries more each time.
    expect(fetches).toBe(13);
    expect(store.readCalls - readsBefore).toBe(fetches);
    await ml.close();
  });

  it('reads nothing from the store for a fetch of entries still in the cache', async () => {
    const store = new InMemoryLedgerStore();
    const { ml, appended } = await filled(store, 8 * 1024 * 1024);
    const readsBefore = store.readCalls;
    const { read } = await fetchAll(ml, 20 * ENTRY_BYTES);
    expect(read).toHaveLength(appended.length);
    expect(store.readCalls - readsBefore).toBe(0);
    await ml.close();
  });

  it('answers every offset, inside an entry too, as the entries hold them', async () => {
    const store = new InMemoryLedgerStore();
    const { ml, appended } = await filled(store, 0);
    const readsBefore = store.readCalls;
    for (const entry of appended) {
      for (let offset = entry.firstOffset; offset <= entry.lastOffset; offset++) {
        expect(await ml.findPosition(offset)).toEqual({
          ...entry.position,
          batchIndex: offset - entry.firstOffset,
          offset,
          beforeEarliest: false,
          pastEnd: false,
        });
      }
    }
    expect(store.readCalls - readsBefore).toBe(0);
    // Past the end is still the end, the next offset to be written.
    expect(await ml.findPosition(ml.lastOffset + 1)).toMatchObject({ pastEnd: true, offset: ml.lastOffset + 1 });
    await ml.close();
  });

  it('finds offsets of closed ledgers whose offsets are no longer in memory through the index, as before', async () => {
    const store = new InMemoryLedgerStore();
    const { ml, appended, backends } = await filled(store, 0);
    await ml.close();
    // Opened again, the closed ledgers' offsets are not loaded: the sparse index and one read find them.
    const again = await ManagedLedger.open(TOPIC, backends.deps(), { config: { ...config, entryCacheMaxBytes: 0 } });
    const entry = appended[70]!;
    const readsBefore = store.readCalls;
    expect(await again.findPosition(entry.firstOffset + 1)).toMatchObject({
      ...entry.position,
      batchIndex: 1,
      offset: entry.firstOffset + 1,
    });
    expect(store.readCalls - readsBefore).toBe(1);
    await again.close();
  });
});
