import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedgerReason } from '../errors.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, textOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { deferred } from '../testing/robustness/deferred.js';
import { readWholeLog } from '../testing/robustness/log-invariants.js';

const config: ManagedLedgerConfigInput = {
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 2,
  cursor: { snapshotIntervalMs: 60_000 },
};

/** Reasons that tell a client for certain that its entry is not in the log. */
const DEFINITE = [ManagedLedgerReason.ledgerFenced, ManagedLedgerReason.managedLedgerFenced] as string[];

describe('appends whose write was in doubt when the owner lost the topic', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('are not failed as fenced when their outcome could not be learned', async () => {
    const topic = 'persistent://acme/robust/in-doubt';
    const a = backend.owner('a');
    const first = await ManagedLedger.open(topic, a.deps, { config });
    const cursor = await first.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const warm = await first.append(payloadOf('warm'));
    // The write of 'x' lands but its reply is lost; checking the ledger then fails until a new owner holds the topic.
    const gate = deferred();
    const checking = deferred();
    a.ledgerStore.faults.push(
      { call: 'append', mode: 'after' },
      { call: 'fence', mode: 'before', until: gate.promise, reached: () => checking.resolve() },
      { call: 'fence', mode: 'before' },
    );
    const outcome = first.append(payloadOf('x')).then(
      () => 'acknowledged',
      (err: unknown) => LedgerlineError.from(err).reason,
    );
    await checking.promise;
    const second = await ManagedLedger.open(topic, backend.owner('b').deps, { config });
    // The first owner learns it lost the topic from its cursor, while its write is still unsettled.
    cursor.ack([warm.position]);
    await expect(cursor.flush()).rejects.toMatchObject({ code: 'ABORTED' });
    gate.resolve();
    const reason = await outcome;
    const log = (await readWholeLog(second)).map((e) => textOf(e.payload));
    expect(log).toEqual(['warm', 'x']);
    expect(DEFINITE).not.toContain(reason);
    await first.close();
    await second.close();
  });
});
