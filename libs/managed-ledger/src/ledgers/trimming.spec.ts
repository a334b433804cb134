import fc from 'fast-check';
import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import type { LedgerView } from './ledger-views.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends } from '../testing/fixtures.js';
import { ledgersToTrim } from './trimming.js';

const TOPIC = 'persistent://acme/trim/t';

const base: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 5,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  cursor: { snapshotIntervalMs: 0 },
};

async function setup(config: ManagedLedgerConfigInput, entries = 23) {
  const backends = testBackends();
  const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config: { ...base, ...config } });
  // Cursors first, so data is not trimmed the moment a ledger closes.
  const a = await ml.openCursor('a', { start: { initialPosition: 'earliest' } });
  const b = await ml.openCursor('b', { start: { initialPosition: 'earliest' } });
  const written: AppendResult[] = [];
  for (let i = 0; i < entries; i++) {
    backends.clock.advance(10);
    written.push(await ml.append(payloadOf(`t${i}`)));
  }
  await ml.trim();
  return { backends, ml, a, b, written };
}

function ids(ml: ManagedLedger): number[] {
  return ml.ledgers().map((l) => l.ledgerId);
}

describe('trimming', () => {
  it('marks exactly the ledgers below the slowest cursor, in the same write that removes them, never the current one', async () => {
    const { backends, ml, a, b, written } = await setup({ retentionTimeMs: 0, retentionSizeBytes: 0 });
    const ledgerOf = (i: number) => written[i]!.position.ledgerId;
    expect(ids(ml)).toEqual([0, 5, 10, 15, 20].map(ledgerOf));
    const versionBefore = (await backends.metadataStore.get(ml.path))!.version;
    // Acks that move a cursor to another ledger start a trim in the background; trim() joins it.
    a.ackCumulative(written[12]!.position);
    b.ackCumulative(written[7]!.position);
    await ml.trim();
    const after = ml.info();
    expect(after.version).toBe(versionBefore + 1);
    expect(after.info.ledgers.map((l) => l.ledgerId)).toEqual([5, 10, 15, 20].map(ledgerOf));
    expect(after.info.deletableLedgers).toEqual([
      expect.objectContaining({ ledgerId: ledgerOf(0), component: 'managed-ledger' }),
    ]);
    b.ackCumulative(written[22]!.position);
    await ml.trim();
    expect(ids(ml)).toEqual([10, 15, 20].map(ledgerOf));
    a.ackCumulative(written[22]!.position);
    await ml.trim();
    // Everything is consumed, but the current ledger stays.
    expect(ids(ml)).toEqual([ledgerOf(20)]);
    expect(await ml.trim()).toEqual([]);
    await ml.close();
    // The markers survive a restart, for the garbage collector.
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config: base });
    expect(reopened.info().info.deletableLedgers.map((d) => d.ledgerId)).toEqual([0, 5, 10, 15].map(ledgerOf));
    await reopened.close();
  });

  it("keeps storedBytes equal to the ledgers' sum through appends, rollovers and trims", async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), {
      config: { ...base, retentionTimeMs: 0, retentionSizeBytes: 0 },
    });
    const viewsSum = () => ml.ledgers().reduce((sum, view) => sum + view.sizeBytes, 0);
    const cursor = await ml.openCursor('a', { start: { initialPosition: 'earliest' } });
    expect(ml.storedBytes()).toBe(0);
    const written: AppendResult[] = [];
    let before = 0;
    for (let i = 0; i < 23; i++) {
      written.push(await ml.append(payloadOf(`entry-${i}`)));
      expect(ml.storedBytes()).toBe(viewsSum());
      expect(ml.storedBytes()).toBeGreaterThan(before);
      before = ml.storedBytes();
    }
    expect(ml.ledgers().length).toBe(5);
    cursor.ackCumulative(written[12]!.position);
    await ml.trim();
    expect(ml.ledgers().length).toBe(3);
    expect(ml.storedBytes()).toBe(viewsSum());
    expect(ml.storedBytes()).toBeLessThan(before);
    await ml.close();
    // A reopened ledger sums what its info recorded.
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config: base });
    expect(reopened.storedBytes()).toBe(reopened.ledgers().reduce((sum, view) => sum + view.sizeBytes, 0));
    expect(reopened.storedBytes()).toBeGreaterThan(0);
    await reopened.close();
  });

  it('keeps consumed ledgers within the retention time and trims them after it', async () => {
    const { backends, ml, a, b, written } = await setup({ retentionTimeMs: 1_000, retentionSizeBytes: -1 });
    a.ackCumulative(written[22]!.position);
    b.ackCumulative(written[22]!.position);
    expect(await ml.trim()).toEqual([]);
    backends.clock.advance(1_001);
    expect((await ml.trim()).length).toBe(4);
    await ml.close();
  });

  it('trims consumed ledgers only while the topic is over its retention size', async () => {
    const retentionSizeBytes = 150;
    const { ml, a, b, written } = await setup({ retentionTimeMs: -1, retentionSizeBytes });
    const sizes = ml.ledgers().map((l) => l.sizeBytes);
    let expected = 0;
    for (
      let total = sizes.reduce((x, y) => x + y, 0);
      expected < sizes.length - 1 && total > retentionSizeBytes;
      expected++
    ) {
      total -= sizes[expected]!;
    }
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(sizes.length - 1);
    a.ackCumulative(written[22]!.position);
    b.ackCumulative(written[22]!.position);
    expect((await ml.trim()).length).toBe(expected);
    expect(ml.ledgers().reduce((sum, l) => sum + l.sizeBytes, 0)).toBeLessThanOrEqual(retentionSizeBytes);
    await ml.close();
  });

  it('never trims with infinite retention and no cursor, and trims everything closed with no retention and no cursor', async () => {
    const backends = testBackends();
    const keep = await ManagedLedger.open(TOPIC, backends.deps(), {
      config: { ...base, retentionTimeMs: -1, retentionSizeBytes: -1 },
    });
    for (let i = 0; i < 12; i++) await keep.append(payloadOf(`k${i}`));
    expect(await keep.trim()).toEqual([]);
    await keep.close();
    const drop = await ManagedLedger.open(TOPIC, backends.deps(), {
      config: { ...base, retentionTimeMs: 0, retentionSizeBytes: 0 },
    });
    await drop.trim();
    expect(drop.ledgers().length).toBe(1);
    await drop.close();
  });
});

describe('ledgersToTrim', () => {
  const viewsArbitrary = fc.array(fc.record({ entries: fc.nat(6), sizeBytes: fc.nat(100), age: fc.nat(50) }), {
    minLength: 1,
    maxLength: 8,
  });

  it('returns a prefix of closed ledgers wholly at or below the slowest mark-delete, never the last', () => {
    fc.assert(
      fc.property(
        viewsArbitrary,
        fc.nat(10),
        fc.nat(7),
        fc.integer({ min: -1, max: 40 }),
        (shape, mdLedger, mdEntry, retentionTimeMs) => {
          const views: LedgerView[] = shape.map((s, i) => ({
            ledgerId: i + 1,
            entries: s.entries,
            firstOffset: 0,
            lastOffset: s.entries - 1,
            sizeBytes: s.sizeBytes,
            open: i === shape.length - 1,
            ...(i === shape.length - 1 ? {} : { closedAtMs: 1_000 - s.age }),
          }));
          const md = { ledgerId: mdLedger, entryId: mdEntry - 1 };
          const trimmed = ledgersToTrim(views, md, { retentionTimeMs, retentionSizeBytes: -1 }, 1_000);
          expect(trimmed).toEqual(views.slice(0, trimmed.length));
          expect(trimmed.map((v) => v.ledgerId)).not.toContain(views.length);
          for (const view of trimmed) {
            const consumed =
              view.entries === 0 ||
              view.ledgerId < md.ledgerId ||
              (view.ledgerId === md.ledgerId && md.entryId >= view.entries - 1);
            expect(consumed).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
