import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { readReferences } from '../testing/robustness/log-invariants.js';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
  maintenanceIntervalMs: 0,
  cursor: { snapshotIntervalMs: 0 },
};

describe('trimming and cursors that are not (or no longer) open', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('waits for every cursor to be recovered, so a slow one keeps its unconsumed ledgers', async () => {
    const topic = 'persistent://acme/robust/trim-during-recovery';
    const first = await ManagedLedger.open(topic, backend.owner('first').deps, { config });
    await first.openCursor('slow', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 8 }, (_, i) => first.append(payloadOf(`m${i}`))));
    await first.close();

    // The next owner's maintenance timer ticks every millisecond; reading the cursor node takes 50.
    const next = backend.owner('second');
    next.metadata.delaysMs.getCursorInfo = 50;
    const second = await ManagedLedger.open(topic, next.deps, { config: { ...config, maintenanceIntervalMs: 1 } });
    const refs = await readReferences(backend.metadata, second.path);
    const withEntries = new Set(written.map((r) => r.position.ledgerId));
    expect([...refs.deletable].filter((ledgerId) => withEntries.has(ledgerId))).toEqual([]);
    expect(await second.getCursor('slow')!.backlog()).toBe(8);
    await second.close();
  });

  it('keeps what a cursor whose delete failed has not consumed: its subscription comes back', async () => {
    const topic = 'persistent://acme/robust/trim-failed-delete';
    const proc = backend.owner('deleting');
    const ml = await ManagedLedger.open(topic, proc.deps, { config });
    await ml.openCursor('leaving', { start: { initialPosition: 'earliest' } });
    const fast = await ml.openCursor('fast', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 8 }, (_, i) => ml.append(payloadOf(`m${i}`))));
    fast.ackCumulative(written[7]!.position);
    proc.metadata.faults.push({ call: 'deleteCursorInfo', mode: 'before' });
    await expect(ml.deleteCursor('leaving')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await ml.trim();
    const refs = await readReferences(backend.metadata, ml.path);
    const withEntries = new Set(written.map((r) => r.position.ledgerId));
    expect([...refs.deletable].filter((ledgerId) => withEntries.has(ledgerId))).toEqual([]);
    await ml.close();
    const again = await ManagedLedger.open(topic, backend.owner('after-restart').deps, { config });
    expect(await again.getCursor('leaving')!.backlog()).toBe(8);
    await again.close();
  });
});
