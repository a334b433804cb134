import { ManagedLedgerState } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../../config.js';
import type { CursorStart } from '../../cursors/cursor-registry.js';
import type { ManagedCursor } from '../../cursors/managed-cursor.js';
import type { ManagedLedger } from '../../managed-ledger.js';
import { positionKey } from '../../position.js';
import { payloadOf } from '../fixtures.js';
import type { RobustnessBackend } from './backend.js';
import { bruteForceBacklog, ConsumedSet, type LogEntry } from './cursor-model.js';
import { checkLedgerCoverage, readReferences, readWholeLog } from './log-invariants.js';
import { clearFaults, crashLeftovers, LIVENESS_MS, openOwner, type Owner } from './owners.js';
import { Random } from './random.js';
import { within } from './waiting.js';

type Step =
  | 'append'
  | 'ackCumulative'
  | 'ackIndividual'
  | 'seekForward'
  | 'trim'
  | 'faultyTrim'
  | 'advanceClock'
  | 'createCursor'
  | 'deleteCursor'
  | 'faultyDeleteCursor'
  | 'cleanRestart'
  | 'crashRestart';

const STEP_WEIGHTS: Record<Step, number> = {
  append: 20,
  ackCumulative: 12,
  ackIndividual: 8,
  seekForward: 3,
  trim: 12,
  faultyTrim: 4,
  advanceClock: 6,
  createCursor: 4,
  deleteCursor: 2,
  faultyDeleteCursor: 2,
  cleanRestart: 3,
  crashRestart: 3,
};

const MAX_CURSORS = 3;

interface Retention {
  retentionTimeMs: number;
  retentionSizeBytes: number;
}

function trimmingConfig(rng: Random, retention: Retention): ManagedLedgerConfigInput {
  return {
    ...retention,
    maxEntriesPerLedger: rng.int(2, 8),
    minLedgerAgeMs: 0,
    maxLedgerAgeMs: 60_000,
    maintenanceIntervalMs: 0,
    maxDeletableLedgers: rng.pick([2, 10_000]),
    cursor: { snapshotIntervalMs: rng.pick([0, 60_000]) },
  };
}

/**
 * Random trims while cursors acknowledge, seek forward, come and go, and the
 * owner restarts or crashes. After every step, every ledger newly marked
 * deletable must hold only entries every live cursor has consumed (by what
 * clients acknowledged), must not be the ledger being written, and must be
 * allowed by retention; at the end the log still serves every entry of every
 * ledger not marked, backlogs are exact and nothing leaked.
 */
export class TrimmingHistory {
  private readonly rng: Random;
  private readonly retention: Retention;
  private readonly config: ManagedLedgerConfigInput;
  private readonly log: LogEntry[] = [];
  private readonly cursors = new Map<string, ConsumedSet>();
  /** Cursors whose delete failed: their nodes may remain, so trimming must still keep what they need. */
  private readonly deleting = new Set<string>();
  private readonly owners: Owner[] = [];
  private readonly violations: string[] = [];
  private deletable = new Set<number>();
  /**
   * When each ledger was closed, as any owner's view showed it: a trim that
   * runs in the background may remove a ledger between two observations.
   */
  private readonly closedAt = new Map<number, number>();
  private cursorCount = 0;
  /** Ledgers holding entries that were trimmed, for LEDGERLINE_ROBUSTNESS_STATS. */
  private trimmedWithEntries = 0;
  private current!: Owner;

  constructor(
    private readonly backend: RobustnessBackend,
    private readonly topic: string,
    seed: number,
  ) {
    this.rng = new Random(seed);
    this.retention = {
      retentionTimeMs: this.rng.pick([0, 30_000, -1]),
      retentionSizeBytes: this.rng.pick([0, 400, -1]),
    };
    this.config = trimmingConfig(this.rng, this.retention);
  }

  async run(steps: number): Promise<string[]> {
    this.current = await this.open();
    await this.createCursor();
    for (let i = 0; i < steps && this.violations.length === 0; i++) {
      const step = this.rng.weighted(STEP_WEIGHTS);
      this.backend.trace?.push(`step ${step} (current ${this.current.name})`);
      this.observeLedgers();
      if (step === 'createCursor') {
        // Trims started before the cursor exists may still remove what it would read: let them finish (and check them) first.
        await this.current.ml.trim();
        await this.checkNewlyDeletable();
      }
      await this.step(step);
      await this.checkNewlyDeletable();
    }
    await this.finish();
    if (process.env['LEDGERLINE_ROBUSTNESS_STATS']) {
      const retention = `${this.retention.retentionTimeMs}/${this.retention.retentionSizeBytes}`;
      console.log(`retention ${retention}: ${this.log.length} entries, ${this.trimmedWithEntries} ledgers trimmed`);
    }
    return this.violations;
  }

  private async open(): Promise<Owner> {
    const owner = await openOwner(this.backend, `owner-${this.owners.length}`, this.topic, this.config, this.rng);
    this.owners.push(owner);
    return owner;
  }

  private cursor(name: string): ManagedCursor {
    const cursor = this.current.ml.getCursor(name);
    if (cursor === undefined) throw new Error(`cursor ${name} is not open on ${this.current.name}`);
    return cursor;
  }

  private async step(step: Step): Promise<void> {
    const names = [...this.cursors.keys()].filter((n) => !this.deleting.has(n));
    const name = names.length > 0 ? this.rng.pick(names) : undefined;
    switch (step) {
      case 'append':
        return this.append(this.rng.int(1, 20));
      case 'ackCumulative':
        return name === undefined ? undefined : this.ackCumulative(name);
      case 'ackIndividual':
        return name === undefined ? undefined : this.ackIndividual(name);
      case 'seekForward':
        return name === undefined ? undefined : this.seekForward(name);
      case 'trim':
        await within(this.current.ml.trim(), LIVENESS_MS, 'trim');
        return;
      case 'faultyTrim':
        return this.faultyTrim();
      case 'advanceClock':
        return this.backend.clock.advance(this.rng.int(1_000, 40_000));
      case 'createCursor':
        return this.cursors.size < MAX_CURSORS ? this.createCursor() : undefined;
      case 'deleteCursor':
        if (name === undefined) return;
        await this.current.ml.deleteCursor(name);
        this.cursors.delete(name);
        return;
      case 'faultyDeleteCursor':
        return name === undefined ? undefined : this.faultyDeleteCursor(name);
      case 'cleanRestart':
        for (const cursorName of names) await this.cursor(cursorName).flush();
        await within(this.current.ml.close(), LIVENESS_MS, 'close');
        this.current = await this.open();
        this.deleting.clear();
        return;
      case 'crashRestart':
        this.current.proc.process.crash();
        this.current = await this.open();
        this.deleting.clear();
        return;
    }
  }

  /**
   * A cursor delete whose node deletion fails: the node is still there, so
   * the subscription comes back after a restart and must still find every
   * entry it had not consumed.
   */
  private async faultyDeleteCursor(name: string): Promise<void> {
    const { proc, ml } = this.current;
    proc.metadata.faults.push({ call: 'deleteCursorInfo', mode: 'before' });
    await expectRejected(ml.deleteCursor(name), 'UNAVAILABLE');
    clearFaults(proc);
    this.deleting.add(name);
  }

  /** A trim whose compare-and-set fails before or after it reaches the store. */
  private async faultyTrim(): Promise<void> {
    const { proc, ml } = this.current;
    proc.metadata.faults.push({ call: 'putManagedLedgerInfo', mode: this.rng.pick(['before', 'after'] as const) });
    await within(ml.trim(), LIVENESS_MS, 'trim').catch((err: unknown) => {
      if (!(err instanceof LedgerlineError) || err.code !== 'UNAVAILABLE') throw err;
    });
    clearFaults(proc);
  }

  private async append(count: number): Promise<void> {
    const sizes = Array.from({ length: count }, () => this.rng.int(1, 2));
    const { ml } = this.current;
    const results = await within(
      Promise.all(sizes.map((n, i) => ml.append(payloadOf(`e${this.log.length + i}`), n))),
      LIVENESS_MS,
      'appends',
    );
    results.forEach((r, i) => this.log.push({ position: r.position, numMessages: sizes[i]! }));
  }

  /** Entries the current owner still serves: those of ledgers not marked deletable. */
  private liveLog(): LogEntry[] {
    return this.log.filter((e) => !this.deletable.has(e.position.ledgerId));
  }

  private ackCumulative(name: string): void {
    const live = this.liveLog();
    if (live.length === 0) return;
    const truth = this.cursors.get(name)!;
    const from = truth.markDeleteIndex(live) + 1;
    const upTo = Math.min(live.length - 1, from + this.rng.int(0, 12));
    this.cursor(name).ackCumulative(live[upTo]!.position);
    for (let i = 0; i <= upTo; i++) truth.addWhole(live[i]!.position);
  }

  private ackIndividual(name: string): void {
    const chosen = this.rng.subset(this.liveLog(), this.rng.pick([0.2, 0.6]));
    this.cursor(name).ack(chosen.map((e) => e.position));
    for (const e of chosen) this.cursors.get(name)!.addWhole(e.position);
  }

  /** A seek past the true mark-delete: everything before the target is consumed, nothing from it on. */
  private async seekForward(name: string): Promise<void> {
    const live = this.liveLog();
    const truth = this.cursors.get(name)!;
    const from = truth.markDeleteIndex(live) + 1;
    if (from >= live.length) return;
    const target = this.rng.int(from, live.length - 1);
    await this.cursor(name).seek({ position: live[target]!.position });
    const reset = new ConsumedSet();
    for (let i = 0; i < target; i++) reset.addWhole(live[i]!.position);
    this.cursors.set(name, reset);
  }

  private async createCursor(): Promise<void> {
    const name = `c${this.cursorCount++}`;
    const live = this.liveLog();
    const kind = this.rng.pick(['earliest', 'latest', 'offset'] as const);
    const at = live.length === 0 ? 0 : this.rng.int(0, live.length - 1);
    const start: CursorStart =
      kind === 'offset' && live.length > 0
        ? { offset: this.firstOffsetOf(live[at]!) }
        : { initialPosition: kind === 'latest' ? 'latest' : 'earliest' };
    await this.current.ml.openCursor(name, { start });
    const consumed = new ConsumedSet();
    const upTo = kind === 'latest' ? live.length : kind === 'offset' ? at : 0;
    for (let i = 0; i < upTo; i++) consumed.addWhole(live[i]!.position);
    this.cursors.set(name, consumed);
  }

  private firstOffsetOf(entry: LogEntry): number {
    let offset = 0;
    for (const e of this.log) {
      if (e === entry) return offset;
      offset += e.numMessages;
    }
    return offset;
  }

  private observeLedgers(): void {
    for (const view of this.current.ml.ledgers()) {
      if (view.closedAtMs !== undefined && !this.closedAt.has(view.ledgerId))
        this.closedAt.set(view.ledgerId, view.closedAtMs);
    }
  }

  /** Checks every ledger marked deletable since the last check. */
  private async checkNewlyDeletable(): Promise<void> {
    const refs = await readReferences(this.backend.metadata, this.current.ml.path);
    const views = this.current.ml.ledgers();
    const writing = views[views.length - 1]?.ledgerId;
    for (const ledgerId of refs.deletable) {
      if (this.deletable.has(ledgerId)) continue;
      const entries = this.log.filter((e) => e.position.ledgerId === ledgerId);
      if (ledgerId === writing) this.violations.push(`ledger ${ledgerId} is being written but was marked deletable`);
      if (entries.length === 0) continue;
      this.trimmedWithEntries++;
      if (this.retention.retentionTimeMs < 0 && this.retention.retentionSizeBytes < 0) {
        this.violations.push(`ledger ${ledgerId} was trimmed although retention keeps everything`);
      }
      // Unknown: closed and trimmed within one step, which retention by time never allows (the clock stood still).
      const closedAtMs = this.closedAt.get(ledgerId);
      const expired =
        closedAtMs !== undefined && this.backend.clock.now() - closedAtMs > this.retention.retentionTimeMs;
      if (this.retention.retentionSizeBytes < 0 && this.retention.retentionTimeMs >= 0 && !expired) {
        this.violations.push(`ledger ${ledgerId} was trimmed before its retention time`);
      }
      for (const [name, consumed] of this.cursors) {
        const needed = entries.find((e) => !consumed.whole.has(positionKey(e.position)));
        if (needed !== undefined) {
          this.violations.push(
            `ledger ${ledgerId} was trimmed, but cursor ${name} had not consumed ${positionKey(needed.position)}`,
          );
        }
      }
    }
    this.deletable = refs.deletable;
    this.observeLedgers();
  }

  /**
   * Every owner closes, and a fresh one must serve every entry of the
   * ledgers not marked, with exact backlogs; then the topic is closed or
   * deleted, and nothing may be left behind unnamed.
   */
  private async finish(): Promise<void> {
    for (const owner of this.owners) if (!owner.proc.process.crashed) await owner.ml.close();
    this.current = await this.open();
    const { ml } = this.current;
    this.deletable = (await readReferences(this.backend.metadata, ml.path)).deletable;
    const live = this.liveLog();
    const stored = await readWholeLog(ml);
    const same =
      stored.length === live.length &&
      stored.every((e, i) => positionKey(e.position) === positionKey(live[i]!.position));
    if (!same)
      this.violations.push(`the log serves ${stored.length} entries, ${live.length} are in ledgers not trimmed`);
    for (const name of this.cursors.keys()) {
      const cursor = this.current.ml.getCursor(name);
      if (cursor === undefined) {
        this.violations.push(`cursor ${name} was not recovered`);
        continue;
      }
      const expected = bruteForceBacklog(live, ConsumedSet.fromExport(cursor.exportState(), live));
      const backlog = await cursor.backlog();
      if (backlog !== expected) this.violations.push(`cursor ${name} backlog ${backlog}, counted ${expected}`);
    }
    if (this.rng.chance(0.5)) await this.deleteTopic(ml);
    else await ml.close();
    const exempt = crashLeftovers(this.owners);
    this.violations.push(
      ...(await checkLedgerCoverage(this.backend.ledgerStore, this.backend.metadata, ml.path, exempt)),
    );
  }

  /** Deleting the topic leaves no ledger in the list, every ledger marked, and no cursor node. */
  private async deleteTopic(ml: ManagedLedger): Promise<void> {
    await within(ml.delete(), LIVENESS_MS, 'delete');
    const refs = await readReferences(this.backend.metadata, ml.path);
    const stored = await this.backend.metadata.getManagedLedgerInfo(ml.path);
    if (refs.ledgers.size > 0)
      this.violations.push(`a deleted topic still lists ledgers ${[...refs.ledgers].join(', ')}`);
    if (stored?.value.state !== ManagedLedgerState.DELETING) this.violations.push('a deleted topic is not DELETING');
    if (refs.cursorLedgers.size > 0) this.violations.push('a deleted topic still has cursor nodes naming ledgers');
  }
}

async function expectRejected(call: Promise<unknown>, code: string): Promise<void> {
  const outcome = await call.then(
    () => 'resolved',
    (err: unknown) => (err instanceof LedgerlineError ? err.code : String(err)),
  );
  if (outcome !== code)
    throw new Error(
      `expected the call to fail ${code}, it ${outcome === 'resolved' ? 'succeeded' : `failed ${outcome}`}`,
    );
}
