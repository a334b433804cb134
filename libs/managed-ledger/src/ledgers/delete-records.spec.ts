import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, textOf } from '../testing/fixtures.js';

const TOPIC = 'persistent://acme/trim/deleted-records';

// Retention keeps everything: only deleting records removes anything here.
const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 5,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 0 },
};

/** 12 entries of 2 messages each (offsets 0..23) over ledgers of 5 entries, and a cursor at the start. */
async function setup() {
  const backends = testBackends();
  const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
  const cursor = await ml.openCursor('readers', { start: { initialPosition: 'earliest' } });
  const written: AppendResult[] = [];
  for (let i = 0; i < 12; i++) written.push(await ml.append(payloadOf(`e${i}`), 2));
  return { backends, ml, cursor, written };
}

describe('deleting records before an offset', () => {
  it('removes the ledgers wholly below it, refuses lookups below it, and moves cursors past the deleted entries', async () => {
    const { ml, cursor, written } = await setup();
    const ledgerOf = (i: number) => written[i]!.position.ledgerId;
    expect(ml.ledgers().map((l) => l.ledgerId)).toEqual([0, 5, 10].map(ledgerOf));
    // Offset 13 is the second message of entry 6 (ledger 2, entry 1): ledger 1 (entries 0-4) goes, ledger 2 stays.
    expect(await ml.deleteRecordsBefore(13)).toBe(13);
    expect(ml.lowWatermark).toBe(13);
    expect(ml.ledgers().map((l) => l.ledgerId)).toEqual([5, 10].map(ledgerOf));
    expect(ml.info().info.deletableLedgers).toEqual([expect.objectContaining({ ledgerId: ledgerOf(0) })]);
    // Below the watermark: the entry holding it, before the earliest (a fetch there is refused OFFSET_TRIMMED).
    for (const offset of [0, 10, 12]) {
      expect(await ml.findPosition(offset)).toMatchObject({
        ...written[6]!.position,
        offset: 13,
        beforeEarliest: true,
        pastEnd: false,
      });
    }
    expect(await ml.findPosition(13)).toMatchObject({ ...written[6]!.position, offset: 13, beforeEarliest: false });
    expect(await ml.findPosition(14)).toMatchObject({ ...written[7]!.position, beforeEarliest: false });
    // The cursor reads from the entry holding the watermark: the entries wholly below it are acknowledged.
    const read = await cursor.readEntries({ maxEntries: 2 });
    expect(read.map((entry) => textOf(entry.payload))).toEqual(['e6', 'e7']);
    await ml.close();
  });

  it('keeps the watermark through a restart, never lowers it, and takes the next offset but nothing past it', async () => {
    const { backends, ml } = await setup();
    expect(await ml.deleteRecordsBefore(4)).toBe(4);
    expect(await ml.deleteRecordsBefore(2)).toBe(4);
    await expect(ml.deleteRecordsBefore(25)).rejects.toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: 'OFFSET_OUT_OF_RANGE',
    });
    expect(ml.lowWatermark).toBe(4);
    await ml.close();
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    expect(reopened.lowWatermark).toBe(4);
    expect(await reopened.findPosition(3)).toMatchObject({ offset: 4, beforeEarliest: true });
    // Offset 10 is the first message of the second ledger: the first goes (the reopen added a fourth), and the
    // cursor is acknowledged up to before it.
    expect(await reopened.deleteRecordsBefore(10)).toBe(10);
    expect(reopened.ledgers().length).toBe(3);
    const [first] = await reopened.getCursor('readers')!.readEntries({ maxEntries: 1 });
    expect(textOf(first!.payload)).toBe('e5');
    // Everything: the watermark is the next offset; the current ledger stays, and the next message is readable.
    expect(await reopened.deleteRecordsBefore(24)).toBe(24);
    expect(reopened.ledgers().length).toBe(1);
    expect(await reopened.findPosition(23)).toMatchObject({ offset: 24, beforeEarliest: true, pastEnd: true });
    const next = await reopened.append(payloadOf('after'));
    expect(next.firstOffset).toBe(24);
    expect(await reopened.findPosition(24)).toMatchObject({ ...next.position, beforeEarliest: false, pastEnd: false });
    await reopened.close();
  });
});
