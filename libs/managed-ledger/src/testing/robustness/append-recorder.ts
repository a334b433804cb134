import { LedgerlineError } from '@ledgerline/errors';
import type { AppendResult } from '../../entry.js';
import type { ManagedLedger } from '../../managed-ledger.js';
import { ManagedLedgerReason } from '../../errors.js';
import { payloadOf } from '../fixtures.js';

/**
 * Failures that say for certain the entry is not in the log: it was refused
 * before it was sent, or the managed ledger settled its outcome (fenced
 * ledgers are read back before their in-doubt appends fail). Every other
 * failure, and a process that died before answering, leaves the outcome
 * open: the entry may or may not be there, but at most once.
 */
const DEFINITE_REASONS = new Set<string>([
  ManagedLedgerReason.ledgerFenced,
  ManagedLedgerReason.managedLedgerFenced,
  ManagedLedgerReason.managedLedgerClosed,
  ManagedLedgerReason.managedLedgerDeleting,
  ManagedLedgerReason.topicTerminated,
  ManagedLedgerReason.tooManyPendingAppends,
  ManagedLedgerReason.entryTooLarge,
  ManagedLedgerReason.invalidNumMessages,
  ManagedLedgerReason.invalidPayload,
]);

export interface AcknowledgedAppend extends AppendResult {
  numMessages: number;
  owner: string;
}

export interface FailedAppend {
  reason: string;
  definite: boolean;
  owner: string;
}

/**
 * What the clients of a history saw: every append issued, with the answer it
 * got (acknowledged with its position and offsets, failed with its reason),
 * or none yet. Payloads are unique, so an entry in the log names its append.
 */
export class AppendRecorder {
  readonly issued = new Map<string, { numMessages: number; owner: string }>();
  readonly acknowledged = new Map<string, AcknowledgedAppend>();
  readonly failed = new Map<string, FailedAppend>();
  /** Appends whose answer is still awaited, per owner process. */
  private readonly inFlight = new Map<string, Promise<void>[]>();
  /** Per owner, the call index of the last acknowledged append: acknowledgements come in call order. */
  private readonly lastAcknowledgedCall = new Map<string, number>();
  readonly violations: string[] = [];
  private counter = 0;

  /** Issues one append without waiting for it. */
  append(ml: ManagedLedger, owner: string, numMessages: number): void {
    const payload = `p${this.counter++}`;
    const call = this.counter;
    this.issued.set(payload, { numMessages, owner });
    const settled = ml.append(payloadOf(payload), numMessages).then(
      (result) => this.onAcknowledged(payload, owner, call, numMessages, result),
      (err: unknown) => this.onFailed(payload, owner, err),
    );
    const list = this.inFlight.get(owner) ?? [];
    list.push(settled);
    this.inFlight.set(owner, list);
  }

  /** Waits for every append of `owner` to be answered. */
  async settle(owner: string): Promise<void> {
    const list = this.inFlight.get(owner) ?? [];
    this.inFlight.delete(owner);
    await Promise.all(list);
  }

  /** Forgets the appends of a crashed owner: they are never answered, their outcome stays open. */
  abandon(owner: string): void {
    this.inFlight.delete(owner);
  }

  /** Appends issued and not answered: allowed in the log at most once, allowed missing. */
  unanswered(): string[] {
    return [...this.issued.keys()].filter((p) => !this.acknowledged.has(p) && !this.failed.has(p));
  }

  private onAcknowledged(payload: string, owner: string, call: number, numMessages: number, r: AppendResult): void {
    const previous = this.lastAcknowledgedCall.get(owner) ?? -1;
    if (call < previous) this.violations.push(`${payload} acknowledged after a later append of ${owner}`);
    this.lastAcknowledgedCall.set(owner, call);
    if (r.lastOffset - r.firstOffset + 1 !== numMessages) {
      this.violations.push(`${payload} of ${numMessages} messages got offsets ${r.firstOffset}..${r.lastOffset}`);
    }
    this.acknowledged.set(payload, { ...r, numMessages, owner });
  }

  private onFailed(payload: string, owner: string, err: unknown): void {
    const error = LedgerlineError.from(err);
    this.failed.set(payload, { reason: error.reason, definite: DEFINITE_REASONS.has(error.reason), owner });
  }
}
