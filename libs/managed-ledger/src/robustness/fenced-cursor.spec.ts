import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';

const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 60_000 },
};

describe('a cursor of an owner that lost the topic', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('refuses to flush acknowledgements it can no longer persist, instead of reporting them durable', async () => {
    const topic = 'persistent://acme/robust/fenced-cursor';
    const first = await ManagedLedger.open(topic, backend.owner('first').deps, { config });
    const cursor = await first.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all([0, 1, 2].map((i) => first.append(payloadOf(`m${i}`))));
    cursor.ack([written[0]!.position]);
    await cursor.flush();
    // Within the snapshot interval: this one waits in memory for the next snapshot.
    cursor.ack([written[2]!.position]);
    const second = await ManagedLedger.open(topic, backend.owner('second').deps, { config });
    // The first owner learns it was fenced from an append, before its cursor persisted anything.
    await expect(first.append(payloadOf('late'))).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'ABORTED', reason: 'CURSOR_FENCED' });
    expect(second.getCursor('sub')!.exportState().ackedRanges).toEqual([]);
    expect(second.getCursor('sub')!.markDeletePosition).toEqual(written[0]!.position);
    await first.close();
    await second.close();
  });
});
