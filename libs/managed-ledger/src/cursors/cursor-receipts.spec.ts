import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { FaultInjectingMetadata } from '../testing/fault-injecting-metadata.js';
import { payloadOf, testBackends, type TestBackends } from '../testing/fixtures.js';
import { MetadataStoreManagedLedgerMetadata } from '../metadata/metadata-store-managed-ledger-metadata.js';

/*
 * ManagedCursor.whenPersisted: what an ack receipt waits for when the client
 * only needs the ack durable some time soon (Ack.receipt_with_next_snapshot).
 * It rides on the snapshot writes the cursor makes anyway, at most one per
 * interval, where flush() writes one for each caller.
 */

const TOPIC = 'persistent://acme/orders/receipts';
const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 200 },
};

async function snapshotsWritten(backends: TestBackends): Promise<number> {
  const metric = await backends.registry.getSingleMetric('ledgerline_cursor_snapshots_total')?.get();
  return metric?.values.reduce((sum, value) => sum + value.value, 0) ?? 0;
}

async function openWithEntries(backends: TestBackends, metadata = backends.deps().metadata) {
  const ml = await ManagedLedger.open(TOPIC, { ...backends.deps(), metadata }, { config });
  const written = [];
  for (let i = 0; i < 6; i++) written.push(await ml.append(payloadOf(`m${i}`)));
  const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
  return { ml, cursor, positions: written.map((result) => result.position) };
}

describe('ManagedCursor.whenPersisted', () => {
  it('answers every caller with the next scheduled snapshot, writing none of its own', async () => {
    const backends = testBackends();
    const { ml, cursor, positions } = await openWithEntries(backends);
    await cursor.flush();
    const before = await snapshotsWritten(backends);
    const waits = positions.map((position) => {
      cursor.ack([position]);
      return cursor.whenPersisted();
    });
    await Promise.all(waits);
    // Six acks, six waiting receipts: one write, the one the interval schedules.
    expect((await snapshotsWritten(backends)) - before).toBe(1);
    expect(cursor.markDeletePosition).toEqual(positions[5]);
    // Nothing changed since: nothing to wait for.
    await cursor.whenPersisted();
    expect((await snapshotsWritten(backends)) - before).toBe(1);
    await ml.close();
  });

  it('waits for the write after the one in flight when the state changed since it started', async () => {
    const backends = testBackends();
    const metadata = new FaultInjectingMetadata(new MetadataStoreManagedLedgerMetadata(backends.metadataStore));
    const { ml, cursor, positions } = await openWithEntries(backends, metadata);
    await cursor.flush();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const writing = new Promise<void>((resolve) => (reached = resolve));
    metadata.faults.push({ call: 'putCursorInfo', mode: 'pass', until: held, reached });
    cursor.ack([positions[0]!]);
    const first = cursor.flush();
    await writing;
    // The write in flight holds the first ack only.
    cursor.ack([positions[1]!]);
    let answered = false;
    const second = cursor.whenPersisted().then(() => (answered = true));
    release();
    await first;
    expect(answered).toBe(false);
    await second;
    expect(answered).toBe(true);
    await ml.close();
  });

  it('refuses, with why, once the cursor goes without writing what it holds', async () => {
    const backends = testBackends();
    const { ml, cursor, positions } = await openWithEntries(backends);
    await cursor.flush();
    cursor.ack([positions[0]!]);
    const waiting = cursor.whenPersisted();
    await ml.deleteCursor('sub');
    await expect(waiting).rejects.toMatchObject({ code: 'FAILED_PRECONDITION', reason: 'CURSOR_CLOSED' });
    await ml.close();
  });
});
