import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedgerReason } from '../errors.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, textOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { deferred } from '../testing/robustness/deferred.js';
import { readWholeLog } from '../testing/robustness/log-invariants.js';
import { LedgerStoreReason } from '@ledgerline/ledger-store';

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
const DEFINITE = [LedgerStoreReason.LEDGER_FENCED, ManagedLedgerReason.MANAGED_LEDGER_FENCED] as string[];

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

describe('appends whose write was in doubt when the store stayed away through every retry', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('fail as in doubt, and the entry that landed is reported adopted once the ledger is checked', async () => {
    const owner = backend.owner('a');
    const ml = await ManagedLedger.open('persistent://acme/robust/store-away', owner.deps, {
      config: { ...config, writeRetryMaxAttempts: 3 },
    });
    const adopted: string[][] = [];
    ml.onEntriesAdopted((entries) => adopted.push(entries.map((e) => `${textOf(e.payload)}@${e.firstOffset}`)));
    await ml.append(payloadOf('warm'));
    // The write of 'x' lands but its reply is lost; the store then stays away while the ledger is checked.
    // 'z' comes while the ledger is being checked: it is never sent, so its failure is a definite one.
    let queued: Promise<string> | undefined;
    const reasonOf = (appending: Promise<unknown>) =>
      appending.then(
        () => 'stored',
        (err: unknown) => LedgerlineError.from(err).reason,
      );
    owner.ledgerStore.faults.push(
      { call: 'append', mode: 'after' },
      { call: 'fence', mode: 'before', reached: () => (queued = reasonOf(ml.append(payloadOf('z')))) },
    );
    for (let i = 0; i < 10; i++) owner.ledgerStore.faults.push({ call: 'fence', mode: 'before' });
    expect(await reasonOf(ml.append(payloadOf('x')))).toBe(ManagedLedgerReason.APPEND_OUTCOME_UNKNOWN);
    expect(await queued).toBe(ManagedLedgerReason.LEDGER_WRITE_FAILED);
    expect(ml.appendsInDoubt).toBe(true);
    await expect(ml.settleAppends()).rejects.toMatchObject({ reason: ManagedLedgerReason.LEDGER_WRITE_FAILED });
    expect(adopted).toEqual([]);
    owner.ledgerStore.faults.splice(0);
    await ml.settleAppends();
    expect(ml.appendsInDoubt).toBe(false);
    expect(adopted).toEqual([['x@1']]);
    expect((await ml.append(payloadOf('y'))).firstOffset).toBe(2);
    expect((await readWholeLog(ml)).map((e) => textOf(e.payload))).toEqual(['warm', 'x', 'y']);
    await ml.close();
  });
});
