import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../../config.js';
import type { ManagedLedgerEntry } from '../../entry.js';
import { ManagedLedgerReason } from '../../errors.js';
import { formatPosition, type Position } from '../../position.js';
import { textOf } from '../fixtures.js';
import { AppendRecorder } from './append-recorder.js';
import type { RobustnessBackend } from './backend.js';
import {
  checkEnds,
  checkLedgerCoverage,
  checkLogAgainstClients,
  checkLookups,
  readReferences,
  readWholeLog,
} from './log-invariants.js';
import { HistoryConsumer } from './history-consumer.js';
import { clearFaults, crashLeftovers, injectRandomFault, LIVENESS_MS, openOwner, type Owner } from './owners.js';
import { Random } from './random.js';
import { within } from './waiting.js';

type Step =
  | 'append'
  | 'read'
  | 'appendToStale'
  | 'fault'
  | 'advanceClock'
  | 'settle'
  | 'takeover'
  | 'cleanRestart'
  | 'crashRestart'
  | 'terminate'
  | 'ack';

const STEP_WEIGHTS: Record<Step, number> = {
  append: 30,
  read: 6,
  appendToStale: 3,
  fault: 16,
  advanceClock: 4,
  settle: 8,
  takeover: 5,
  cleanRestart: 4,
  crashRestart: 4,
  terminate: 1,
  ack: 6,
};

/** Rollover by age happens on the next append once the clock moves past this. */
const MAX_LEDGER_AGE_MS = 60_000;

/**
 * A configuration drawn per history: small ledgers and batches, few retries;
 * with a consumer, retention 0, so ledgers are trimmed behind it; without,
 * nothing is.
 */
function historyConfig(rng: Random, trimmed: boolean): ManagedLedgerConfigInput {
  return {
    maxEntriesPerLedger: rng.int(2, 12),
    minLedgerAgeMs: 0,
    maxLedgerAgeMs: MAX_LEDGER_AGE_MS,
    maxWriteBatchEntries: rng.int(1, 8),
    maxPendingAppends: rng.chance(0.25) ? 24 : 1_000,
    writeRetryMaxAttempts: rng.int(2, 6),
    writeRetryInitialBackoffMs: rng.int(0, 1),
    writeRetryMaxBackoffMs: 2,
    maintenanceIntervalMs: 0,
    retentionTimeMs: trimmed ? 0 : -1,
    retentionSizeBytes: trimmed ? 0 : -1,
    cursor: { snapshotIntervalMs: rng.pick([0, 60_000]) },
  };
}

/**
 * One random history against a managed ledger: pipelined appends, injected
 * store and metadata failures, rollovers, takeovers by a second owner, clean
 * and crash restarts. What clients saw is recorded and checked at the end
 * against the log the final owner serves, and again after a clean reopen.
 */
export class AppendHistory {
  readonly recorder = new AppendRecorder();
  private readonly rng: Random;
  private readonly config: ManagedLedgerConfigInput;
  /** A subscription the owners trim behind, in half of the histories. */
  private readonly consumer: HistoryConsumer | undefined;
  private readonly owners: Owner[] = [];
  private current!: Owner;
  private ownerCount = 0;
  /** Where a terminate that succeeded said the log ends (null: the log was empty); undefined when none did. */
  private terminatedAt: Position | null | undefined;
  /** What a tailing reader was served, oldest first: the final log must hold exactly this at the same places. */
  private readonly served: ManagedLedgerEntry[] = [];

  constructor(
    private readonly backend: RobustnessBackend,
    private readonly topic: string,
    seed: number,
  ) {
    this.rng = new Random(seed);
    this.consumer = this.rng.chance(0.5) ? new HistoryConsumer() : undefined;
    this.config = historyConfig(this.rng, this.consumer !== undefined);
  }

  /** Runs `steps` random steps, then every check; returns the violations found. */
  async run(steps: number): Promise<string[]> {
    this.current = await this.open(0);
    await this.consumer?.attach(this.current);
    for (let i = 0; i < steps; i++) await this.step(this.rng.weighted(STEP_WEIGHTS));
    return this.finish();
  }

  private async open(faults: number): Promise<Owner> {
    const owner = await openOwner(
      this.backend,
      `owner-${this.ownerCount++}`,
      this.topic,
      this.config,
      this.rng,
      faults,
    );
    this.owners.push(owner);
    return owner;
  }

  private async step(step: Step): Promise<void> {
    const { rng, recorder } = this;
    const owner = this.current;
    this.backend.trace?.push(`step ${step} (current ${owner.name})`);
    switch (step) {
      case 'append': {
        const count = rng.int(1, 25);
        for (let i = 0; i < count; i++) recorder.append(owner.ml, owner.name, rng.int(1, 4));
        if (rng.chance(0.5)) await within(recorder.settle(owner.name), LIVENESS_MS, `appends of ${owner.name}`);
        return;
      }
      case 'appendToStale': {
        const stale = this.owners.filter((o) => o !== owner && !o.proc.process.crashed);
        const target = stale.length > 0 ? rng.pick(stale) : undefined;
        if (target !== undefined) recorder.append(target.ml, target.name, 1);
        return;
      }
      case 'read':
        return this.readTail(owner);
      case 'fault': {
        // Mostly one failure, sometimes an outage of several in a row, which outlasts the retries.
        const count = rng.chance(0.2) ? rng.int(2, 8) : 1;
        for (let i = 0; i < count; i++) injectRandomFault(owner.proc, rng);
        return;
      }
      case 'advanceClock':
        return this.backend.clock.advance(MAX_LEDGER_AGE_MS + 1);
      case 'settle':
        return within(recorder.settle(owner.name), LIVENESS_MS, `appends of ${owner.name}`);
      case 'takeover':
        // The old owner stays alive: it must learn it was fenced and answer everything it holds.
        this.current = await this.open(rng.int(0, 2));
        return;
      case 'cleanRestart':
        await within(recorder.settle(owner.name), LIVENESS_MS, `appends of ${owner.name}`);
        await within(owner.ml.close(), LIVENESS_MS, `close of ${owner.name}`);
        this.current = await this.open(rng.int(0, 2));
        return;
      case 'crashRestart':
        owner.proc.process.crash();
        recorder.abandon(owner.name);
        this.current = await this.open(rng.int(0, 2));
        return;
      case 'terminate':
        return this.terminate(owner);
      case 'ack':
        return this.consumer?.ack(owner, recorder, rng);
    }
  }

  /** Terminates the topic; a terminate that fails may or may not have been recorded. */
  private async terminate(owner: Owner): Promise<void> {
    const last = await within(owner.ml.terminate(), LIVENESS_MS, 'terminate').then(
      (position) => position ?? null,
      (err: unknown) => {
        if (err instanceof LedgerlineError) return undefined;
        throw err;
      },
    );
    if (last !== undefined && this.terminatedAt === undefined) this.terminatedAt = last;
  }

  /** A terminated topic ends where its terminate said, and a reopened owner refuses appends; otherwise it accepts them. */
  private checkTermination(verifier: Owner, entries: readonly ManagedLedgerEntry[]): string[] {
    const violations: string[] = [];
    const end = entries[entries.length - 1]?.position;
    const terminated = verifier.ml.state === 'terminated';
    const tail = [...this.recorder.failed].filter(([, f]) => f.owner === verifier.name).map(([, f]) => f.reason);
    if (this.terminatedAt !== undefined && !terminated)
      violations.push('a terminate succeeded, yet the topic reopened active');
    if (
      this.terminatedAt !== undefined &&
      formatPosition(end ?? { ledgerId: -1, entryId: -1 }) !==
        formatPosition(this.terminatedAt ?? { ledgerId: -1, entryId: -1 })
    ) {
      violations.push(
        `the topic was terminated at ${this.terminatedAt ? formatPosition(this.terminatedAt) : 'its start'}, the log ends at ${end ? formatPosition(end) : 'its start'}`,
      );
    }
    if (terminated && tail[0] !== ManagedLedgerReason.topicTerminated)
      violations.push(`a terminated topic answered an append with ${tail[0] ?? 'success'}`);
    if (!terminated && tail.length > 0) violations.push(`the reopened owner could not append: ${tail[0]}`);
    return violations;
  }

  /** A tailing reader takes the next page from the current owner, where the last page ended. */
  private async readTail(owner: Owner): Promise<void> {
    const last = this.served[this.served.length - 1];
    const first = owner.ml.ledgers()[0];
    if (first === undefined) return;
    const from =
      last === undefined
        ? { ledgerId: first.ledgerId, entryId: 0 }
        : { ...last.position, entryId: last.position.entryId + 1 };
    const read = owner.ml.readEntries(from, { maxEntries: this.rng.int(1, 50) });
    // A read may fail (an injected store failure, an owner closing); only what it serves must be right.
    const page = await within(read, LIVENESS_MS, 'a read').catch((err: unknown) => {
      if (err instanceof LedgerlineError) return [];
      throw err;
    });
    this.served.push(...page);
  }

  /** Everything the reader was served is in the log (or in a trimmed ledger), at the same place, with the same offsets and payload. */
  private checkServed(entries: readonly ManagedLedgerEntry[], trimmed: ReadonlySet<number>): string[] {
    const stored = new Map(entries.map((e) => [formatPosition(e.position), e]));
    const violations: string[] = [];
    for (const served of this.served) {
      if (trimmed.has(served.position.ledgerId)) continue;
      const entry = stored.get(formatPosition(served.position));
      const same =
        entry !== undefined &&
        entry.firstOffset === served.firstOffset &&
        entry.lastOffset === served.lastOffset &&
        textOf(entry.payload) === textOf(served.payload);
      if (!same) {
        violations.push(
          `a reader was served ${textOf(served.payload)} at ${formatPosition(served.position)}, the log differs there`,
        );
      }
    }
    return violations;
  }

  private async finish(): Promise<string[]> {
    const live = this.owners.filter((o) => !o.proc.process.crashed);
    for (const owner of live) await within(this.recorder.settle(owner.name), LIVENESS_MS, `appends of ${owner.name}`);
    clearFaults(this.current.proc);
    const violations = await this.checkOwner(this.current, 'final owner');
    for (const owner of live) await within(owner.ml.close(), LIVENESS_MS, `close of ${owner.name}`);
    // A fresh owner after a clean close must serve the same log and continue its offsets.
    const verifier = await this.open(0);
    this.recorder.append(verifier.ml, verifier.name, 1);
    await within(this.recorder.settle(verifier.name), LIVENESS_MS, 'the verifier append');
    violations.push(...this.checkTermination(verifier, await readWholeLog(verifier.ml)));
    violations.push(...(await this.checkOwner(verifier, 'reopened owner')));
    await verifier.ml.close();
    if (process.env['LEDGERLINE_ROBUSTNESS_STATS']) console.log(this.stats());
    const exempt = crashLeftovers(this.owners);
    violations.push(
      ...(await checkLedgerCoverage(this.backend.ledgerStore, this.backend.metadata, verifier.ml.path, exempt)),
    );
    return violations;
  }

  private stats(): string {
    const failed = [...this.recorder.failed.values()];
    const reasons = new Map<string, number>();
    for (const f of failed) reasons.set(f.reason, (reasons.get(f.reason) ?? 0) + 1);
    return `owners ${this.owners.length} acked ${this.recorder.acknowledged.size} unanswered ${this.recorder.unanswered().length} failed ${JSON.stringify([...reasons])}`;
  }

  private async checkOwner(owner: Owner, label: string): Promise<string[]> {
    // A trim an acknowledgement started may still be running: let it finish, so the log read and the marks agree.
    await within(owner.ml.trim(), LIVENESS_MS, 'trim');
    const entries = await readWholeLog(owner.ml);
    const trimmed = (await readReferences(this.backend.metadata, owner.ml.path)).deletable;
    const firstOffset = owner.ml.ledgers()[0]?.firstOffset ?? 0;
    const found = [
      ...checkLogAgainstClients(entries, this.recorder, { firstOffset, trimmedLedgers: trimmed }),
      ...this.checkServed(entries, trimmed),
      ...checkEnds(owner.ml, entries),
      ...(this.consumer?.checkTrimmed(trimmed, this.recorder) ?? []),
      ...(await checkLookups(
        owner.ml,
        entries,
        (below) => this.rng.int(0, below - 1),
        10,
        () => owner.proc.ledgerStore.readCalls,
      )),
    ];
    return found.map((v) => `${label}: ${v}`);
  }
}
