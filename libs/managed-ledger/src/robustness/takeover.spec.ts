import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { readWholeLog } from '../testing/robustness/log-invariants.js';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 1,
  maxWriteBatchEntries: 1,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

describe('taking a topic over from a live owner', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('wins against an owner that records a new ledger while the takeover recovers the last one', async () => {
    const topic = 'persistent://acme/robust/takeover-rolling';
    const old = backend.owner('old');
    const first = await ManagedLedger.open(topic, old.deps, { config });
    await first.append(payloadOf('warm-up'));
    // The old owner rolls over after every entry; each rollover takes a ledger id that arrives 30 ms late.
    old.metadata.delaysMs.allocateLedgerId = 30;
    const outcomes = Array.from({ length: 20 }, (_, i) =>
      first.append(payloadOf(`e${i}`)).then(
        () => 'acknowledged',
        () => 'failed',
      ),
    );
    // The new owner's recovery reads take longer than a rollover of the old one.
    const next = backend.owner('new');
    next.ledgerStore.delaysMs.read = 100;
    const second = await ManagedLedger.open(topic, next.deps, { config });
    const results = await Promise.all(outcomes);
    // Fenced mid-stream, the old owner refused what it had not written yet.
    expect(results).toContain('failed');
    const acknowledged = results.filter((r) => r === 'acknowledged').length;
    expect((await readWholeLog(second)).length).toBe(acknowledged + 1);
    await first.close();
    await second.close();
  });
});
