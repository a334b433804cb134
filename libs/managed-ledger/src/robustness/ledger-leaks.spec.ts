import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type OwnerProcess, type RobustnessBackend } from '../testing/robustness/backend.js';
import { untilNoFindings } from '../testing/robustness/waiting.js';
import { checkLedgerCoverage } from '../testing/robustness/log-invariants.js';

/** Two entries per ledger, so the third append rolls over; retries are quick. */
const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  writeRetryInitialBackoffMs: 0,
  writeRetryMaxBackoffMs: 1,
};

describe('data ledgers whose recording failed', () => {
  let backend: RobustnessBackend;
  let topicCount = 0;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  function topic(): string {
    return `persistent://acme/robust/ledger-leaks-${topicCount++}`;
  }

  async function coverage(ml: ManagedLedger): Promise<string[]> {
    return checkLedgerCoverage(backend.ledgerStore, backend.metadata, ml.path);
  }

  /** An owner whose next rollover creates a ledger and then fails to record it (`mode`). */
  async function rolloverFails(name: string, mode: 'before' | 'after', configInput = config) {
    const proc: OwnerProcess = backend.owner(name);
    const ml = await ManagedLedger.open(topic(), proc.deps, { config: configInput });
    await Promise.all([ml.append(payloadOf('a')), ml.append(payloadOf('b'))]);
    proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode });
    return { proc, ml };
  }

  it.each(['before', 'after'] as const)(
    'are marked deletable by the next rollover when the write failed %s reaching the store',
    async (mode) => {
      const { ml } = await rolloverFails(`next-${mode}`, mode);
      // The failed rollover is retried with a new ledger; the one it abandoned is marked then.
      await ml.append(payloadOf('c'));
      expect(await coverage(ml)).toEqual([]);
      await ml.close();
      expect(await coverage(ml)).toEqual([]);
    },
  );

  it('are deleted when another owner takes the topic before the next rollover', async () => {
    const { ml } = await rolloverFails('fenced', 'before', { ...config, writeRetryMaxAttempts: 1 });
    await expect(ml.append(payloadOf('c'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const second = await ManagedLedger.open(ml.topic, backend.owner('fenced-b').deps, { config });
    await expect(ml.append(payloadOf('d'))).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await untilNoFindings(() => coverage(second))).toEqual([]);
    await ml.close();
    await second.close();
  });

  it('are deleted when the owner closes without being able to record them', async () => {
    const { proc, ml } = await rolloverFails('closing', 'before', { ...config, writeRetryMaxAttempts: 1 });
    await expect(ml.append(payloadOf('c'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    proc.metadata.faults.push({ call: 'getManagedLedgerInfo', mode: 'before' });
    await ml.close();
    expect(await coverage(ml)).toEqual([]);
  });

  it('are marked deletable when the topic is deleted', async () => {
    const { ml } = await rolloverFails('deleted', 'before', { ...config, writeRetryMaxAttempts: 1 });
    await expect(ml.append(payloadOf('c'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await ml.delete();
    expect(await coverage(ml)).toEqual([]);
  });

  it.each(['before', 'after'] as const)(
    'are not left behind by an open whose write failed %s reaching the store',
    async (mode) => {
      const name = topic();
      const first = await ManagedLedger.open(name, backend.owner(`open-${mode}-a`).deps, { config });
      await first.append(payloadOf('a'));
      const proc = backend.owner(`open-${mode}-b`);
      // The claim succeeds; the write naming the new ledger fails.
      proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode: 'pass' }, { call: 'putManagedLedgerInfo', mode });
      await expect(ManagedLedger.open(name, proc.deps, { config })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      const second = await ManagedLedger.open(name, proc.deps, { config });
      expect(await coverage(second)).toEqual([]);
      await first.close();
      await second.close();
    },
  );

  it('are gone, for the reads that follow, once an open of a terminated topic returns', async () => {
    const first = await ManagedLedger.open(topic(), backend.owner('terminated-a').deps, { config });
    await first.append(payloadOf('a'));
    await first.terminate();
    await first.close();
    // The open makes its next ledger while it reads the node, and deletes it, unawaited, on finding the topic
    // terminated. No wait for the delete here: it was called before the open returned, so every read after sees it
    // (on SQLite the reads below run in one run of microtasks, before the store's transaction would start).
    const reopened = await ManagedLedger.open(first.topic, backend.owner('terminated-b').deps, { config });
    expect(reopened.state).toBe('terminated');
    expect(await coverage(reopened)).toEqual([]);
    await reopened.close();
  });

  it('are not left behind by a create whose reply was lost', async () => {
    const proc = backend.owner('create-lost');
    const ml = await ManagedLedger.open(topic(), proc.deps, { config });
    await Promise.all([ml.append(payloadOf('a')), ml.append(payloadOf('b'))]);
    proc.ledgerStore.faults.push({ call: 'create', mode: 'after' });
    await ml.append(payloadOf('c'));
    expect(await untilNoFindings(() => coverage(ml))).toEqual([]);
    await ml.close();
  });
});
