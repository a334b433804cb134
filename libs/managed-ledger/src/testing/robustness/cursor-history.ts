import { eventually } from '@ledgerline/testing';
import type { ManagedLedgerConfigInput } from '../../config.js';
import type { ManagedCursor } from '../../cursors/managed-cursor.js';
import { formatPosition } from '../../position.js';
import type { LedgerFault } from '../fault-injecting-ledger-store.js';
import type { MetadataFault } from '../fault-injecting-metadata.js';
import { payloadOf } from '../fixtures.js';
import type { RobustnessBackend } from './backend.js';
import { bruteForceBacklog, checkRecoveredCursor, ConsumedSet, type LogEntry } from './cursor-model.js';
import { checkLedgerCoverage, readWholeLog } from './log-invariants.js';
import {
  clearFaults,
  crashLeftovers,
  CURSOR_RECOVERY_FAULTS,
  LIVENESS_MS,
  METADATA_FAULTS,
  openOwner,
  type Owner,
} from './owners.js';
import { Random } from './random.js';
import { within } from './waiting.js';

type Step =
  | 'append'
  | 'bigAppend'
  | 'ackIndividual'
  | 'ackCumulative'
  | 'ackBatch'
  | 'flush'
  | 'faultyFlush'
  | 'tornFlush'
  | 'ackOnStale'
  | 'cleanRestart'
  | 'crashRestart'
  | 'takeover';

const STEP_WEIGHTS: Record<Step, number> = {
  append: 10,
  bigAppend: 3,
  ackIndividual: 14,
  ackCumulative: 6,
  ackBatch: 6,
  flush: 8,
  faultyFlush: 10,
  tornFlush: 5,
  ackOnStale: 3,
  cleanRestart: 4,
  crashRestart: 4,
  takeover: 3,
};

const CURSORS = ['c0', 'c1'] as const;

/** Failures a snapshot write can meet: cursor-ledger writes, node writes, and marking an old cursor ledger deletable. */
const SNAPSHOT_FAULTS: readonly (LedgerFault | MetadataFault)[] = [
  { call: 'append', mode: 'before', component: 'cursor' },
  { call: 'append', mode: 'after', component: 'cursor' },
  { call: 'create', mode: 'before', component: 'cursor' },
  { call: 'create', mode: 'after', component: 'cursor' },
  { call: 'putCursorInfo', mode: 'before' },
  { call: 'putCursorInfo', mode: 'after' },
  { call: 'putManagedLedgerInfo', mode: 'before' },
  { call: 'putManagedLedgerInfo', mode: 'after' },
  { call: 'allocateLedgerId', mode: 'before' },
];

function cursorConfig(rng: Random): ManagedLedgerConfigInput {
  return {
    maxEntriesPerLedger: rng.int(50, 3_000),
    minLedgerAgeMs: 0,
    maintenanceIntervalMs: 0,
    retentionTimeMs: -1,
    retentionSizeBytes: -1,
    writeRetryInitialBackoffMs: 0,
    writeRetryMaxBackoffMs: 1,
    cursor: {
      snapshotIntervalMs: rng.pick([0, 60_000]),
      inlineSnapshotMaxBytes: rng.pick([0, 0, 64, 2_048]),
      snapshotMaxEntrySizeBytes: 1_024,
      maxSnapshotsPerLedger: rng.int(1, 4),
    },
  };
}

/**
 * Random acknowledgements on two cursors, with snapshot writes that fail
 * (lost replies, failed node writes, a crash after some chunks of a
 * snapshot), restarts, crashes and takeovers. After every change of owner
 * each recovered cursor is checked against every acknowledgement ever made
 * and against the last state a flush made durable, and its backlog against a
 * count over the whole log.
 */
export class CursorHistory {
  private readonly rng: Random;
  private readonly config: ManagedLedgerConfigInput;
  /** Entries a big append adds: some histories grow states of several KiB, so snapshots go out in chunks. */
  private readonly bigAppendEntries: number;
  private readonly log: LogEntry[] = [];
  private readonly truth = new Map<string, ConsumedSet>(CURSORS.map((c) => [c, new ConsumedSet()]));
  private readonly durable = new Map<string, ConsumedSet>(CURSORS.map((c) => [c, new ConsumedSet()]));
  private readonly owners: Owner[] = [];
  private readonly violations: string[] = [];
  /** How snapshots were written and how many crashes tore one, for LEDGERLINE_ROBUSTNESS_STATS. */
  private readonly stats = new Map<string, number>();
  private current!: Owner;

  constructor(
    private readonly backend: RobustnessBackend,
    private readonly topic: string,
    seed: number,
  ) {
    this.rng = new Random(seed);
    this.config = cursorConfig(this.rng);
    this.bigAppendEntries = this.rng.pick([500, 4_000]);
  }

  async run(steps: number): Promise<string[]> {
    this.current = await this.open();
    for (const name of CURSORS) await this.current.ml.openCursor(name, { start: { initialPosition: 'earliest' } });
    for (let i = 0; i < steps && this.violations.length === 0; i++) {
      const step = this.rng.weighted(STEP_WEIGHTS);
      this.backend.trace?.push(`step ${step} (current ${this.current.name})`);
      await this.step(step);
    }
    if (this.violations.length === 0) await this.restart('crash');
    for (const owner of this.owners) if (!owner.proc.process.crashed) await owner.ml.close();
    const { ledgerStore, metadata } = this.backend;
    const exempt = crashLeftovers(this.owners);
    this.violations.push(...(await checkLedgerCoverage(ledgerStore, metadata, this.current.ml.path, exempt)));
    if (process.env['LEDGERLINE_ROBUSTNESS_STATS'])
      console.log(this.log.length, 'entries', JSON.stringify([...this.stats]));
    return this.violations;
  }

  private count(what: string): void {
    this.stats.set(what, (this.stats.get(what) ?? 0) + 1);
  }

  private async open(): Promise<Owner> {
    // Opens meet failures too, in the ledgers and in the cursor nodes they recover.
    const faults = this.owners.length === 0 ? 0 : this.rng.int(0, 2);
    const name = `owner-${this.owners.length}`;
    const owner = await openOwner(this.backend, name, this.topic, this.config, this.rng, faults, [
      ...METADATA_FAULTS,
      ...CURSOR_RECOVERY_FAULTS,
    ]);
    clearFaults(owner.proc);
    this.owners.push(owner);
    return owner;
  }

  private cursor(name: string): ManagedCursor {
    const cursor = this.current.ml.getCursor(name);
    if (cursor === undefined) throw new Error(`cursor ${name} was not recovered by ${this.current.name}`);
    return cursor;
  }

  private async step(step: Step): Promise<void> {
    const name = this.rng.pick(CURSORS);
    switch (step) {
      case 'append':
        return this.append(this.rng.int(1, 30));
      case 'bigAppend':
        return this.append(this.rng.int(this.bigAppendEntries / 2, this.bigAppendEntries));
      case 'ackIndividual':
        return this.ackIndividual(this.cursor(name), name);
      case 'ackCumulative':
        return this.ackCumulative(this.cursor(name), name);
      case 'ackBatch':
        return this.ackBatch(this.cursor(name), name);
      case 'flush':
        await this.flush(this.cursor(name), name);
        return;
      case 'faultyFlush':
        return this.faultyFlush(name);
      case 'tornFlush':
        return this.tornFlush(name);
      case 'ackOnStale':
        return this.ackOnStale(name);
      case 'cleanRestart':
        return this.restart('clean');
      case 'crashRestart':
        return this.restart('crash');
      case 'takeover':
        return this.restart('takeover');
    }
  }

  private async append(count: number): Promise<void> {
    const sizes = Array.from({ length: count }, () => this.rng.int(1, 3));
    const { ml } = this.current;
    const results = await within(
      Promise.all(sizes.map((n, i) => ml.append(payloadOf(`e${this.log.length + i}`), n))),
      LIVENESS_MS,
      'appends',
    );
    results.forEach((r, i) => this.log.push({ position: r.position, numMessages: sizes[i]! }));
  }

  private ackIndividual(cursor: ManagedCursor, name: string): void {
    const chosen = this.rng.subset(this.log, this.rng.pick([0.05, 0.3, 0.7]));
    cursor.ack(chosen.map((e) => e.position));
    for (const entry of chosen) this.truth.get(name)!.addWhole(entry.position);
  }

  private ackCumulative(cursor: ManagedCursor, name: string): void {
    if (this.log.length === 0) return;
    const truth = this.truth.get(name)!;
    // Mostly a little past the true mark-delete, so the cursor keeps holes above it.
    const from = truth.markDeleteIndex(this.log) + 1;
    const upTo = Math.min(this.log.length - 1, from + this.rng.int(0, 50));
    cursor.ackCumulative(this.log[upTo]!.position);
    for (let i = 0; i <= upTo; i++) truth.addWhole(this.log[i]!.position);
  }

  private ackBatch(cursor: ManagedCursor, name: string): void {
    const batches = this.log.filter((e) => e.numMessages > 1);
    if (batches.length === 0) return;
    const entry = this.rng.pick(batches);
    const indexes = Array.from({ length: entry.numMessages }, (_, i) => i).filter(() => this.rng.chance(0.5));
    cursor.ackBatchIndexes(entry.position, indexes, entry.numMessages);
    this.truth.get(name)!.addIndexes(entry, indexes);
  }

  /** A successful flush makes the cursor's state at the call durable. */
  private async flush(cursor: ManagedCursor, name: string): Promise<boolean> {
    const state = ConsumedSet.fromExport(cursor.exportState(), this.log);
    try {
      await within(cursor.flush(), LIVENESS_MS, `flush of ${name}`);
    } catch (err) {
      if (err instanceof Error && err.message.includes('did not settle')) throw err;
      return false;
    }
    this.durable.set(name, state);
    const snapshot = cursor.lastSnapshot;
    if (snapshot !== undefined) this.count(`${snapshot.where}${snapshot.entries > 1 ? ' chunked' : ''}`);
    this.backend.trace?.push(`flushed ${name} on ${this.current.name}: ${describe(state, this.log)}`);
    return true;
  }

  private async faultyFlush(name: string): Promise<void> {
    const cursor = this.cursor(name);
    this.ackIndividual(cursor, name);
    const fault = this.rng.pick(SNAPSHOT_FAULTS);
    const proc = this.current.proc;
    if ('component' in fault) proc.ledgerStore.faults.push({ ...fault });
    else proc.metadata.faults.push({ ...(fault as MetadataFault) });
    await this.flush(cursor, name);
    clearFaults(proc);
  }

  /** The process dies after writing some chunks of a snapshot (if the snapshot goes to the cursor ledger). */
  private async tornFlush(name: string): Promise<void> {
    const cursor = this.cursor(name);
    this.ackIndividual(cursor, name);
    const proc = this.current.proc;
    proc.ledgerStore.faults.push({ call: 'append', mode: 'torn', keep: this.rng.int(1, 6), component: 'cursor' });
    const state = ConsumedSet.fromExport(cursor.exportState(), this.log);
    let settled = false;
    // A flush the crash interrupts never answers; one that went inline does.
    void cursor.flush().then(
      () => ((settled = true), this.durable.set(name, state)),
      () => (settled = true),
    );
    await eventually(() => settled || proc.process.crashed, {
      attempts: LIVENESS_MS,
      intervalMs: 1,
      description: `flush of ${name} or a crash`,
    });
    this.count(proc.process.crashed ? 'torn' : 'not torn');
    clearFaults(proc);
    await this.restart('crash');
  }

  /** A client acknowledges on an owner that lost the topic: refused, or kept in memory and never made durable. */
  private async ackOnStale(name: string): Promise<void> {
    const stale = this.owners.filter((o) => o !== this.current && !o.proc.process.crashed && o.ml.state !== 'closed');
    const owner = stale.length > 0 ? this.rng.pick(stale) : undefined;
    const cursor = owner?.ml.getCursor(name);
    if (cursor === undefined || cursor.state !== 'open' || this.log.length === 0) return;
    const entry = this.rng.pick(this.log);
    try {
      cursor.ack([entry.position]);
    } catch {
      // An entry the stale owner never saw (written after it lost the topic), or a cursor it knows is fenced.
      return;
    }
    this.truth.get(name)!.addWhole(entry.position);
    await this.flush(cursor, name);
  }

  private async restart(kind: 'clean' | 'crash' | 'takeover'): Promise<void> {
    const old = this.current;
    if (kind === 'crash') old.proc.process.crash();
    if (kind === 'clean') {
      for (const name of CURSORS) await this.flush(this.cursor(name), name);
      await within(old.ml.close(), LIVENESS_MS, `close of ${old.name}`);
    }
    this.current = await this.open();
    await this.checkRecovered();
  }

  private async checkRecovered(): Promise<void> {
    const stored = await readWholeLog(this.current.ml);
    const same =
      stored.length === this.log.length &&
      stored.every((e, i) => formatPosition(e.position) === formatPosition(this.log[i]!.position));
    if (!same) this.violations.push(`the log holds ${stored.length} entries, ${this.log.length} were acknowledged`);
    for (const name of CURSORS) {
      const cursor = this.cursor(name);
      const recovered = ConsumedSet.fromExport(cursor.exportState(), this.log);
      this.backend.trace?.push(`recovered ${name} on ${this.current.name}: ${describe(recovered, this.log)}`);
      const found = checkRecoveredCursor(name, this.log, recovered, this.truth.get(name)!, this.durable.get(name)!);
      this.violations.push(...found.map((v) => `${this.current.name}: ${v}`));
      const expected = bruteForceBacklog(this.log, recovered);
      const backlog = await cursor.backlog();
      if (backlog !== expected)
        this.violations.push(`${this.current.name}: cursor ${name} backlog ${backlog}, counted ${expected}`);
    }
  }
}

/** The mark-delete index and the batch entries acknowledged in part, for traces. */
function describe(set: ConsumedSet, log: readonly LogEntry[]): string {
  const partial = [...set.indexes].map(([key, indexes]) => `${key}[${[...indexes].join(',')}]`);
  return `mark-delete #${set.markDeleteIndex(log)}, ${set.whole.size} whole, partial ${partial.join(' ')}`;
}

/**
 * A cursor whose state needs several chunks: after one complete snapshot,
 * more acknowledgements, then a snapshot cut after k of its n chunks by a
 * crash, for k = 1..n-1. The next owner must recover exactly the complete
 * snapshot (the torn chunks are skipped, not mistaken for corruption).
 */
export async function tornSnapshotHistory(backend: RobustnessBackend, rng: Random): Promise<string[]> {
  const topic = `persistent://acme/robust/torn-${rng.seed}`;
  const config: ManagedLedgerConfigInput = {
    maxEntriesPerLedger: 20_000,
    maxPendingAppends: 20_000,
    minLedgerAgeMs: 0,
    maintenanceIntervalMs: 0,
    retentionTimeMs: -1,
    retentionSizeBytes: -1,
    cursor: { snapshotIntervalMs: 60_000, inlineSnapshotMaxBytes: 0, snapshotMaxEntrySizeBytes: 1_024 },
  };
  let owner = await openOwner(backend, 'torn-0', topic, config, rng);
  let cursor = await owner.ml.openCursor('c', { start: { initialPosition: 'earliest' } });
  const results = await Promise.all(Array.from({ length: 12_000 }, (_, i) => owner.ml.append(payloadOf(`t${i}`))));
  const log: LogEntry[] = results.map((r) => ({ position: r.position, numMessages: 1 }));
  const truth = new ConsumedSet();
  const violations: string[] = [];
  for (let round = 1; round <= 3 && violations.length === 0; round++) {
    const chosen = rng.subset(log, 0.3);
    cursor.ack(chosen.map((e) => e.position));
    for (const e of chosen) truth.addWhole(e.position);
    await cursor.flush();
    const durable = ConsumedSet.fromExport(cursor.exportState(), log);
    const chunks = cursor.lastSnapshot?.entries ?? 0;
    if (chunks < 3) violations.push(`round ${round}: the snapshot took ${chunks} entries, the test needs chunks`);
    const more = rng.subset(log, 0.2);
    cursor.ack(more.map((e) => e.position));
    for (const e of more) truth.addWhole(e.position);
    // Cut the next snapshot after k chunks: k from 1 to n - 1 over the rounds.
    owner.proc.ledgerStore.faults.push({ call: 'append', mode: 'torn', keep: round, component: 'cursor' });
    void cursor.flush().catch(() => undefined);
    await eventually(() => owner.proc.process.crashed, {
      attempts: LIVENESS_MS,
      intervalMs: 1,
      description: 'the torn snapshot',
    });
    owner = await openOwner(backend, `torn-${round}`, topic, config, rng);
    cursor = owner.ml.getCursor('c')!;
    const recovered = ConsumedSet.fromExport(cursor.exportState(), log);
    violations.push(...checkRecoveredCursor('c', log, recovered, truth, durable));
    if (recovered.whole.size !== durable.whole.size) {
      violations.push(
        `round ${round}: recovered ${recovered.whole.size} entries consumed, the complete snapshot held ${durable.whole.size}`,
      );
    }
    const fallbacks = owner.proc.logger.lines.filter((l) => l.message.includes('cursor recovery fell back'));
    if (fallbacks.length > 0) violations.push(`round ${round}: a torn snapshot was reported as corrupt`);
    const backlog = await cursor.backlog();
    if (backlog !== bruteForceBacklog(log, recovered))
      violations.push(`round ${round}: backlog ${backlog} is not exact`);
  }
  await owner.ml.close();
  return violations;
}
