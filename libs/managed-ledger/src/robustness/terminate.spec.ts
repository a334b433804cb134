import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { checkLedgerCoverage } from '../testing/robustness/log-invariants.js';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  writeRetryMaxAttempts: 1,
};

describe('a terminate that could not be recorded', () => {
  let backend: RobustnessBackend;
  let topicCount = 0;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  /** An owner whose terminate fails; with `rolloverFails`, a rollover before it failed to record its new ledger too. */
  async function failedTerminate(name: string, rolloverFails = false) {
    const proc = backend.owner(name);
    const ml = await ManagedLedger.open(`persistent://acme/robust/terminate-${topicCount++}`, proc.deps, { config });
    await Promise.all([ml.append(payloadOf('a')), ml.append(payloadOf('b'))]);
    if (rolloverFails) {
      proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode: 'before' });
      await expect(ml.append(payloadOf('lost'))).rejects.toMatchObject({ reason: 'LEDGER_WRITE_FAILED' });
    }
    proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode: 'before' });
    await expect(ml.terminate()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    return ml;
  }

  it('is recorded when terminate is called again', async () => {
    const ml = await failedTerminate('retry');
    await ml.terminate();
    await ml.close();
    const again = await ManagedLedger.open(ml.topic, backend.owner('retry-b').deps, { config });
    expect(again.state).toBe('terminated');
    await expect(again.append(payloadOf('c'))).rejects.toMatchObject({ reason: 'TOPIC_TERMINATED' });
    await again.close();
  });

  it('still lets close record the ledgers, leaving none unnamed', async () => {
    const ml = await failedTerminate('close', true);
    await ml.close();
    expect(await checkLedgerCoverage(backend.ledgerStore, backend.metadata, ml.path)).toEqual([]);
    const stored = await backend.metadata.getManagedLedgerInfo(ml.path);
    // The last ledger is recorded closed, so the next owner has nothing to recover.
    expect(stored!.value.ledgerInfo.every((l) => l.timestamp !== undefined && l.timestamp > 0n)).toBe(true);
    const again = await ManagedLedger.open(ml.topic, backend.owner('close-b').deps, { config });
    expect(again.state).toBe('open');
    expect((await again.append(payloadOf('c'))).firstOffset).toBe(2);
    await again.close();
  });
});
