import { AckSet, DATA_PATH_LIMITS } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../config.js';
import type { AppendResult } from '../entry.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, textOf, type TestBackends } from '../testing/fixtures.js';
import { InMemoryLedgerStore } from '../testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/orders/cursors';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 5,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 0 },
};

async function openWith(backends: TestBackends, overrides: ManagedLedgerConfigInput = {}) {
  return ManagedLedger.open(TOPIC, backends.deps(), {
    config: { ...config, ...overrides, cursor: { ...config.cursor, ...overrides.cursor } },
  });
}

/** Appends in concurrent groups, so large counts go through group commit quickly. */
async function appendMany(ml: ManagedLedger, count: number, numMessages = 1): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (let start = 0; start < count; start += 500) {
    const group = Array.from({ length: Math.min(500, count - start) }, (_, i) =>
      ml.append(payloadOf(`m${start + i}`), numMessages),
    );
    results.push(...(await Promise.all(group)));
  }
  return results;
}

describe('ManagedCursor positions and acks', () => {
  it('starts at earliest, latest or an offset', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 12);
    const earliest = await ml.openCursor('e', { start: { initialPosition: 'earliest' } });
    const latest = await ml.openCursor('l', { start: { initialPosition: 'latest' } });
    const fromOffset = await ml.openCursor('o', { start: { offset: 7 } });
    expect((await earliest.readEntries({ maxEntries: 1 }))[0]!.position).toEqual(written[0]!.position);
    expect(await latest.readEntries()).toEqual([]);
    expect((await fromOffset.readEntries({ maxEntries: 1 }))[0]!.firstOffset).toBe(7);
    const next = await ml.append(payloadOf('new'));
    expect((await latest.readEntries()).map((e) => e.position)).toEqual([next.position]);
    await ml.close();
  });

  it('advances mark-delete as gaps fill, across ledgers', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 12);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const at = (i: number) => written[i]!.position;
    cursor.ack([at(1), at(2), at(4), at(5), at(6)]);
    expect(cursor.isAcknowledged(at(0))).toBe(false);
    // Ledgers hold 5 entries: ranges 1..2 and 4 in the first ledger, 0..1 in the second.
    expect(cursor.stats().ackedRanges).toBe(3);
    cursor.ack([at(0)]);
    // 0..2 are contiguous now; 3 is the gap.
    expect(cursor.isAcknowledged(at(2))).toBe(true);
    expect(cursor.stats().ackedRanges).toBe(2);
    cursor.ack([at(3)]);
    // 0..6 consumed: mark-delete sits at entry 6, in the second ledger.
    expect(cursor.markDeletePosition).toEqual(at(6));
    expect(cursor.stats().ackedEntriesAboveMarkDelete).toBe(0);
    cursor.ackCumulative(at(9));
    // The last entry of a closed ledger is spelled as "before the next ledger".
    expect(cursor.markDeletePosition).toEqual({ ledgerId: at(10).ledgerId, entryId: -1 });
    expect((await cursor.readEntries({ maxEntries: 1 }))[0]!.position).toEqual(at(10));
    await ml.close();
  });

  it('skips individually acknowledged entries when reading and counts the exact backlog in messages', async () => {
    const ml = await openWith(testBackends());
    const written: AppendResult[] = [];
    for (let i = 0; i < 10; i++) written.push(await ml.append(payloadOf(`b${i}`), i + 1));
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const total = written.reduce((sum, r) => sum + (r.lastOffset - r.firstOffset + 1), 0);
    expect(await cursor.backlog()).toBe(total);
    cursor.ack([written[3]!.position, written[7]!.position]);
    cursor.ackBatchIndexes(written[5]!.position, [0, 2], 6);
    expect(await cursor.backlog()).toBe(total - 4 - 8 - 2);
    cursor.ackBatchIndexes(written[5]!.position, [1, 3, 4, 5], 6);
    expect(cursor.isAcknowledged(written[5]!.position)).toBe(true);
    expect(await cursor.backlog()).toBe(total - 4 - 8 - 6);
    const read = await cursor.readEntries({ maxEntries: 100 });
    expect(read.map((e) => textOf(e.payload))).toEqual(['b0', 'b1', 'b2', 'b4', 'b6', 'b8', 'b9']);
    cursor.ackCumulative(written[9]!.position);
    expect(await cursor.backlog()).toBe(0);
    expect(cursor.backlogEntries()).toBe(0);
    await ml.close();
  });

  it('applies a contiguous ack as ranges, leaving the same state as acking each position', async () => {
    const backends = testBackends();
    const ml = await openWith(backends);
    const written = await appendMany(ml, 12);
    const whole = await ml.openCursor('whole', { start: { initialPosition: 'earliest' } });
    const each = await ml.openCursor('each', { start: { initialPosition: 'earliest' } });
    // Two runs across a ledger boundary (ledgers hold 5 entries), out of order and with a duplicate.
    const picked = [8, 2, 3, 4, 5, 6, 9, 3].map((i) => written[i]!.position);
    const addRange = jest.spyOn(AckSet.prototype, 'addRange');
    const add = jest.spyOn(AckSet.prototype, 'add');
    whole.ack(picked);
    // One insertion per run (2..4, 5..6, 8..9 by index), none per position.
    expect(addRange).toHaveBeenCalledTimes(3);
    expect(add).not.toHaveBeenCalled();
    addRange.mockRestore();
    add.mockRestore();
    for (const p of picked) each.ack([p]);
    expect(whole.exportState().ackedRanges).toEqual(each.exportState().ackedRanges);
    expect(whole.markDeletePosition).toEqual(each.markDeletePosition);
    // 2..4 in the first ledger, 0..1 and 3..4 in the second: one range each, not one per position.
    expect(whole.stats().ackedRanges).toBe(3);
    whole.ack([0, 1].map((i) => written[i]!.position));
    each.ack([written[1]!.position]);
    each.ack([written[0]!.position]);
    expect(whole.markDeletePosition).toEqual(written[6]!.position);
    expect(whole.exportState().ackedRanges).toEqual(each.exportState().ackedRanges);
    await ml.close();
  });

  it('refuses a whole ack that names a missing entry, an entry -1 or more positions than the limit, changing nothing', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 3);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const ledgerId = written[0]!.position.ledgerId;
    expect(() => cursor.ack([written[1]!.position, { ledgerId, entryId: 99 }])).toThrow(
      expect.objectContaining({ reason: 'POSITION_OUT_OF_RANGE' }),
    );
    expect(() => cursor.ack([written[1]!.position, { ledgerId, entryId: -1 }])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'INVALID_POSITION' }),
    );
    const tooMany = Array.from({ length: DATA_PATH_LIMITS.maxAckPositionsPerCall + 1 }, () => written[1]!.position);
    expect(() => cursor.ack(tooMany)).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARGUMENT',
        reason: 'LIMIT_EXCEEDED',
        details: { limit: 'maxAckPositionsPerCall', max: '10000', sent: '10001' },
      }),
    );
    expect(cursor.isAcknowledged(written[1]!.position)).toBe(false);
    expect(cursor.stats().ackedRanges).toBe(0);
    cursor.ack(tooMany.slice(1));
    expect(cursor.isAcknowledged(written[1]!.position)).toBe(true);
    await ml.close();
  });

  it('acknowledges ranges beside single positions as the ranges they are, across ledgers', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 12);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const at = (i: number) => written[i]!.position;
    const range = (first: number, last: number) => ({
      ledgerId: at(first).ledgerId,
      firstEntryId: at(first).entryId,
      lastEntryId: at(last).entryId,
    });
    // Ledgers hold 5 entries: 1..3 in the first ledger, 5..8 in the second, 11 single.
    cursor.ack([at(11)], [range(1, 3), range(5, 8)]);
    expect(cursor.markDeletePosition).toEqual({ ledgerId: at(0).ledgerId, entryId: -1 });
    expect(cursor.exportState().ackedRanges).toEqual([range(1, 3), range(5, 8), range(11, 11)]);
    cursor.ack([at(0), at(4)], [range(0, 2)]);
    expect(cursor.markDeletePosition).toEqual(at(8));
    expect(cursor.exportState().ackedRanges).toEqual([range(11, 11)]);
    await ml.close();
  });

  it('refuses a whole ack whose range names entries the topic does not have, or runs backwards, changing nothing', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 7);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const { ledgerId } = written[0]!.position;
    const secondLedger = written[5]!.position.ledgerId;
    const outOfRange = expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'POSITION_OUT_OF_RANGE' });
    // Past the end of a closed ledger, past the last entry of the topic, in a ledger the topic never had.
    expect(() => cursor.ack([written[0]!.position], [{ ledgerId, firstEntryId: 3, lastEntryId: 5 }])).toThrow(
      outOfRange,
    );
    expect(() =>
      cursor.ack([written[0]!.position], [{ ledgerId: secondLedger, firstEntryId: 0, lastEntryId: 2 }]),
    ).toThrow(outOfRange);
    expect(() => cursor.ack([], [{ ledgerId: secondLedger + 1000, firstEntryId: 0, lastEntryId: 0 }])).toThrow(
      outOfRange,
    );
    expect(() => cursor.ack([written[0]!.position], [{ ledgerId, firstEntryId: 2, lastEntryId: 1 }])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: 'INVALID_POSITION' }),
    );
    const tooLong = { ledgerId, firstEntryId: 0, lastEntryId: DATA_PATH_LIMITS.maxAckPositionsPerCall };
    expect(() => cursor.ack([], [tooLong])).toThrow(expect.objectContaining({ reason: 'LIMIT_EXCEEDED' }));
    expect(cursor.isAcknowledged(written[0]!.position)).toBe(false);
    expect(cursor.stats().ackedRanges).toBe(0);
    await ml.close();
  });

  it('rejects acks of positions that are not entries, and bad batch acks', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 3);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const ledgerId = written[0]!.position.ledgerId;
    expect(() => cursor.ack([{ ledgerId, entryId: 99 }])).toThrow(
      expect.objectContaining({ reason: 'POSITION_OUT_OF_RANGE' }),
    );
    expect(() => cursor.ack([{ ledgerId: 'x', entryId: 1 } as never])).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
    expect(() => cursor.ackBatchIndexes(written[1]!.position, [5], 3)).toThrow(
      expect.objectContaining({ reason: 'INVALID_BATCH_ACK' }),
    );
    await expect(ml.openCursor('')).rejects.toMatchObject({ reason: 'INVALID_CURSOR_NAME' });
    await expect(ml.openCursor('s', { start: { initialPosition: 'middle' } as never })).rejects.toMatchObject({
      reason: 'INVALID_CURSOR_START',
    });
    await expect(cursor.seek(undefined as never)).rejects.toMatchObject({ reason: 'INVALID_SEEK_TARGET' });
    expect(() => cursor.applyAckDelta(null as never)).toThrow(expect.objectContaining({ reason: 'INVALID_ACK_DELTA' }));
    await ml.close();
  });
});

describe('ManagedCursor persistence and recovery', () => {
  it('recovers mark-delete, holes, batch acks and properties after a restart (inline state)', async () => {
    const backends = testBackends();
    const ml = await openWith(backends);
    const written = await appendMany(ml, 20, 4);
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    cursor.ack([written[0]!.position, written[2]!.position, written[11]!.position]);
    cursor.ackBatchIndexes(written[4]!.position, [1, 3], 4);
    cursor.setProperty('seq', 42n);
    cursor.setCursorProperty('owner', 'team-a');
    const before = cursor.exportState();
    await ml.close();
    const reopened = await openWith(backends);
    const recovered = reopened.getCursor('sub')!;
    const after = recovered.exportState();
    expect(after.markDelete).toEqual(before.markDelete);
    expect(after.ackedRanges).toEqual(before.ackedRanges);
    expect(after.batchAcks).toEqual(before.batchAcks);
    expect(after.properties.get('seq')).toBe(42n);
    expect(after.cursorProperties.get('owner')).toBe('team-a');
    expect(recovered.cursorLedgerId).toBe(-1);
    await reopened.close();
  });

  it('writes large states to the cursor ledger in chunks and recovers them', async () => {
    const store = new InMemoryLedgerStore();
    const backends = testBackends({ ledgerStore: store });
    const overrides = {
      maxEntriesPerLedger: 100_000,
      cursor: { inlineSnapshotMaxBytes: 0, snapshotMaxEntrySizeBytes: 1024 },
    };
    const ml = await openWith(backends, overrides);
    const written = await appendMany(ml, 40_000);
    const cursor = await ml.openCursor('big', { start: { initialPosition: 'earliest' } });
    // Pseudo-random holes so the state does not compress into one entry.
    let seed = 7;
    const acked = written.filter(() => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 3 !== 0));
    const positions = acked.map((r) => r.position);
    for (let i = 0; i < positions.length; i += DATA_PATH_LIMITS.maxAckPositionsPerCall) {
      cursor.ack(positions.slice(i, i + DATA_PATH_LIMITS.maxAckPositionsPerCall));
    }
    await cursor.flush();
    expect(cursor.lastSnapshot!.entries).toBeGreaterThan(1);
    expect(cursor.cursorLedgerId).toBeGreaterThan(0);
    const before = cursor.exportState();
    const reopened = await openWith(backends, overrides);
    const after = reopened.getCursor('big')!.exportState();
    expect(after.markDelete).toEqual(before.markDelete);
    expect(after.ackedRanges).toEqual(before.ackedRanges);
    await reopened.close();
    await ml.close();
  });

  it('rolls the cursor ledger over: the new ledger gets the latest snapshot, the old one is marked deletable', async () => {
    const backends = testBackends();
    const overrides = { cursor: { inlineSnapshotMaxBytes: 0, maxSnapshotsPerLedger: 2 } };
    const ml = await openWith(backends, overrides);
    const written = await appendMany(ml, 10);
    const cursor = await ml.openCursor('roll', { start: { initialPosition: 'earliest' } });
    const ledgersSeen = new Set<number>();
    for (let i = 1; i < 10; i += 2) {
      cursor.ack([written[i]!.position]);
      await cursor.flush();
      ledgersSeen.add(cursor.cursorLedgerId);
    }
    expect(ledgersSeen.size).toBeGreaterThanOrEqual(2);
    const { info } = ml.info();
    const retired = [...ledgersSeen].filter((id) => id !== cursor.cursorLedgerId);
    for (const id of retired) {
      expect(info.deletableLedgers).toContainEqual(
        expect.objectContaining({ ledgerId: id, component: 'cursor', cursorName: 'roll' }),
      );
    }
    const before = cursor.exportState();
    const reopened = await openWith(backends, overrides);
    expect(reopened.getCursor('roll')!.exportState().ackedRanges).toEqual(before.ackedRanges);
    await reopened.close();
    await ml.close();
  });

  it('falls back to the previous snapshot when the newest is corrupt, and says so', async () => {
    const store = new InMemoryLedgerStore();
    const backends = testBackends({ ledgerStore: store });
    const overrides = { cursor: { inlineSnapshotMaxBytes: 0 } };
    const ml = await openWith(backends, overrides);
    const written = await appendMany(ml, 10);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    cursor.ack([written[2]!.position]);
    await cursor.flush();
    const older = cursor.exportState();
    cursor.ack([written[5]!.position]);
    await cursor.flush();
    store.corruptEntry(cursor.cursorLedgerId, store.entryCount(cursor.cursorLedgerId) - 1);
    const reopened = await openWith(backends, overrides);
    expect(reopened.getCursor('c')!.exportState().ackedRanges).toEqual(older.ackedRanges);
    expect(backends.logger.lines.some((l) => l.message.includes('cursor recovery fell back'))).toBe(true);
    const fallbacks = await backends.registry.getSingleMetric('ledgerline_cursor_snapshot_fallbacks_total')!.get();
    expect(fallbacks.values[0]!.value).toBe(1);
    await reopened.close();
    await ml.close();
  });

  it('counts and logs acknowledged ranges beyond maxRangesToPersist', async () => {
    const backends = testBackends();
    const ml = await openWith(backends, { cursor: { maxRangesToPersist: 2 } });
    const written = await appendMany(ml, 12);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    cursor.ack([1, 3, 5, 7, 9].map((i) => written[i]!.position));
    await cursor.flush();
    expect(cursor.lastSnapshot!.rangesDropped).toBe(3);
    const metric = await backends.registry.getSingleMetric('ledgerline_cursor_ranges_not_persisted_total')!.get();
    expect(metric.values[0]!.value).toBeGreaterThanOrEqual(3);
    expect(backends.logger.lines.some((l) => l.message.includes('maxRangesToPersist'))).toBe(true);
    await ml.close();
  });

  it('deletes a cursor: its node goes and its ledger becomes deletable', async () => {
    const backends = testBackends();
    const ml = await openWith(backends, { cursor: { inlineSnapshotMaxBytes: 0 } });
    const written = await appendMany(ml, 3);
    const cursor = await ml.openCursor('gone', { start: { initialPosition: 'earliest' } });
    cursor.ack([written[1]!.position]);
    await cursor.flush();
    const ledgerId = cursor.cursorLedgerId;
    await ml.deleteCursor('gone');
    expect(ml.getCursor('gone')).toBeUndefined();
    expect(await backends.deps().metadata.getCursorInfo(ml.path, 'gone')).toBeUndefined();
    expect(ml.info().info.deletableLedgers).toContainEqual(expect.objectContaining({ ledgerId, component: 'cursor' }));
    expect(() => cursor.ack([written[0]!.position])).toThrow(expect.objectContaining({ reason: 'CURSOR_CLOSED' }));
    await ml.close();
  });
});

describe('ManagedCursor seek and deltas', () => {
  it('seeks to a position, an offset and a time, bumping the reset epoch', async () => {
    const backends = testBackends();
    const ml = await openWith(backends);
    const written: AppendResult[] = [];
    const times: number[] = [];
    for (let i = 0; i < 12; i++) {
      backends.clock.advance(100);
      times.push(backends.clock.nowMs);
      written.push(await ml.append(payloadOf(`s${i}`), 2));
    }
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'latest' } });
    expect(await cursor.seek({ position: written[4]!.position })).toEqual(written[4]!.position);
    expect(cursor.currentResetEpoch).toBe(1);
    expect((await cursor.readEntries({ maxEntries: 1 }))[0]!.position).toEqual(written[4]!.position);
    await cursor.seek({ offset: written[8]!.firstOffset + 1 });
    expect((await cursor.readEntries({ maxEntries: 1 }))[0]!.position).toEqual(written[8]!.position);
    await cursor.seek({ timestampMs: times[2]! - 1 });
    expect((await cursor.readEntries({ maxEntries: 1 }))[0]!.position).toEqual(written[2]!.position);
    expect(cursor.currentResetEpoch).toBe(3);
    await expect(cursor.seek({ offset: 0 }, 1)).rejects.toMatchObject({ code: 'ABORTED' });
    expect(() => cursor.applyAckDelta({ resetEpoch: 2, ackedRanges: [] })).toThrow(
      expect.objectContaining({ reason: 'CURSOR_RESET_EPOCH_MISMATCH' }),
    );
    await ml.close();
    const reopened = await openWith(backends);
    expect(reopened.getCursor('c')!.currentResetEpoch).toBe(3);
    await reopened.close();
  });

  it('stores the properties a seek sets in the write that moves it, and sets none when the move is refused', async () => {
    const backends = testBackends();
    // Snapshots an hour apart: only a seek's own write can have stored anything read back below.
    const hourly = { cursor: { snapshotIntervalMs: 3_600_000 } };
    const ml = await openWith(backends, hourly);
    const written = await appendMany(ml, 8);
    const cursor = await ml.openCursor('group', { start: { initialPosition: 'earliest' } });
    await cursor.seek({ offset: 5 }, 0, { properties: { committed: 5n }, cursorProperties: { metadata: 'batch 1' } });
    await expect(cursor.seek({ offset: 7 }, 0, { properties: { committed: 7n } })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    await expect(cursor.seek({ offset: 7 }, 1, { properties: { '': 7n } })).rejects.toMatchObject({
      reason: 'INVALID_CURSOR_PROPERTY',
    });
    expect(cursor.getProperties().get('committed')).toBe(5n);
    // Opened again without closing the first, as after a crash: what it reads is what was stored.
    const after = await openWith(backends, hourly);
    const recovered = after.getCursor('group')!.exportState();
    expect(recovered.properties.get('committed')).toBe(5n);
    expect(recovered.cursorProperties.get('metadata')).toBe('batch 1');
    expect(after.getCursor('group')!.readPositionNow).toEqual(written[5]!.position);
    await after.close();
    await ml.close().catch(() => undefined);
  });

  it('applies ack deltas by union and exports the state', async () => {
    const ml = await openWith(testBackends());
    const written = await appendMany(ml, 12);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const l0 = written[0]!.position.ledgerId;
    const l1 = written[5]!.position.ledgerId;
    const delta = {
      resetEpoch: 0,
      ackedRanges: [
        { ledgerId: l0, firstEntryId: 1, lastEntryId: 2 },
        { ledgerId: l1, firstEntryId: 0, lastEntryId: 3 },
      ],
    };
    cursor.applyAckDelta(delta);
    cursor.applyAckDelta(delta);
    cursor.applyAckDelta({ resetEpoch: 0, markDelete: written[0]!.position });
    const exported = cursor.exportState();
    expect(exported.markDelete).toEqual(written[2]!.position);
    expect(exported.ackedRanges).toEqual([{ ledgerId: l1, firstEntryId: 0, lastEntryId: 3 }]);
    expect(exported.lastConfirmedEntry).toEqual(written[11]!.position);
    expect(() =>
      cursor.applyAckDelta({ resetEpoch: 0, ackedRanges: [{ ledgerId: l0, firstEntryId: 3, lastEntryId: 2 }] }),
    ).toThrow(expect.objectContaining({ reason: 'INVALID_ACK_DELTA' }));
    await ml.close();
  });
});

describe('ManagedCursor with another owner', () => {
  it('a cursor whose node changed under it is fenced with the managed ledger', async () => {
    const backends = testBackends();
    const ml = await openWith(backends);
    const written = await appendMany(ml, 3);
    const cursor = await ml.openCursor('c', { start: { initialPosition: 'earliest' } });
    const path = `${ml.path}/c`;
    const node = await backends.metadataStore.get(path);
    await backends.metadataStore.put(path, node!.value, { expectedVersion: node!.version });
    cursor.ack([written[0]!.position]);
    await expect(cursor.flush()).rejects.toBeInstanceOf(LedgerlineError);
    expect(cursor.state).toBe('fenced');
    expect(ml.state).toBe('fenced');
    await ml.close();
  });
});
