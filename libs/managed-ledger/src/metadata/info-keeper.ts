import { equals } from '@bufbuild/protobuf';
import { ManagedLedgerInfoSchema, type ManagedLedgerInfo } from '@ledgerline/proto';
import { isBadVersion, managedLedgerFencedError } from '../errors.js';
import {
  cloneInfo,
  infoFromProto,
  infoToProto,
  isCollectorChange,
  withDeletable,
  type DeletableLedgerRecord,
  type ManagedLedgerInfoModel,
} from '@ledgerline/ledger-info';
import type { ManagedLedgerMetadata } from './metadata-access.js';

/** A write whose outcome we did not learn (the call failed, the write may still have landed). */
interface UncertainWrite {
  proto: ManagedLedgerInfo;
  model: ManagedLedgerInfoModel;
}

/**
 * Compare-and-set conflicts in one update caused by the garbage collector
 * removing markers it finished; past this many the update fails (the
 * collector cannot remove more markers than there are, so this is never hit
 * unless something else keeps changing the node).
 */
const MAX_COLLECTOR_CONFLICTS = 16;

/**
 * The managed ledger's view of its ManagedLedgerInfo and the version it read.
 * Updates run one at a time, each a compare-and-set on the version the last
 * one produced, so within a process they never race; a lost compare-and-set
 * can then only mean that another process wrote the node: another owner.
 * A write that failed without an answer is checked by re-reading before the
 * next one, so a write that did land is never mistaken for another owner's.
 * The one other writer of a live node is the garbage collector, which only
 * removes deletable markers of ledgers it deleted: such a change is adopted
 * and the update retried on top of it (see collector-changes.ts of @ledgerline/ledger-info).
 */
export class InfoKeeper {
  private tail: Promise<unknown> = Promise.resolve();
  private fenced = false;
  private uncertain: UncertainWrite | undefined;
  /** Deletable markers a failed update could not record: every later update carries them. */
  private pending: DeletableLedgerRecord[] = [];

  constructor(
    private readonly metadata: ManagedLedgerMetadata,
    readonly path: string,
    private current: ManagedLedgerInfoModel,
    private currentVersion: number,
    private readonly onConflict: (err: Error) => void,
  ) {}

  get info(): Readonly<ManagedLedgerInfoModel> {
    return this.current;
  }

  get version(): number {
    return this.currentVersion;
  }

  get isFenced(): boolean {
    return this.fenced;
  }

  /** Markers waiting for the next successful update. */
  get pendingDeletable(): readonly DeletableLedgerRecord[] {
    return this.pending;
  }

  /** Records `records` deletable with the next successful update (the one that carried them failed). */
  markLater(records: readonly DeletableLedgerRecord[]): void {
    const known = new Set(this.pending.map((r) => r.ledgerId));
    this.pending.push(...records.filter((r) => !known.has(r.ledgerId)));
  }

  /** Hands the waiting markers over (to be discarded once this owner can no longer record them). */
  takePending(): DeletableLedgerRecord[] {
    return this.pending.splice(0);
  }

  /**
   * Applies `mutate` to a copy of the current info and writes it with a
   * compare-and-set. Returns what `mutate` returned. On a conflict the keeper
   * is fenced for good and every later update fails with MANAGED_LEDGER_FENCED;
   * on any other failure the in-memory info stays as it was.
   */
  update<T>(mutate: (draft: ManagedLedgerInfoModel) => T): Promise<T> {
    const run = async (): Promise<T> => {
      for (let conflicts = 0; ; conflicts++) {
        if (this.fenced) throw managedLedgerFencedError(this.path);
        if (this.uncertain !== undefined) await this.settleUncertainWrite(this.uncertain);
        const attempt = await this.tryUpdate(mutate, conflicts < MAX_COLLECTOR_CONFLICTS);
        if (attempt.done) return attempt.result;
      }
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** One compare-and-set; `done: false` when the collector changed the node first and the update must run again. */
  private async tryUpdate<T>(
    mutate: (draft: ManagedLedgerInfoModel) => T,
    mayAdopt: boolean,
  ): Promise<{ done: true; result: T } | { done: false }> {
    const draft = cloneInfo(this.current);
    const result = mutate(draft);
    const carried = this.pending.slice();
    const listed = new Set(draft.ledgers.map((l) => l.ledgerId));
    draft.deletableLedgers = withDeletable(
      draft,
      carried.filter((r) => !listed.has(r.ledgerId)),
    );
    const proto = infoToProto(draft);
    try {
      this.currentVersion = await this.metadata.putManagedLedgerInfo(this.path, proto, this.currentVersion);
    } catch (err) {
      if (isBadVersion(err)) {
        if (mayAdopt && (await this.adoptCollectorChange())) return { done: false };
        throw this.fence(err);
      }
      this.uncertain = { proto, model: draft };
      throw err;
    }
    this.current = draft;
    this.pending = this.pending.filter((r) => !carried.includes(r));
    return { done: true, result };
  }

  /** After a lost compare-and-set: true (and the node adopted) when only the collector changed it. */
  private async adoptCollectorChange(): Promise<boolean> {
    const stored = await this.metadata.getManagedLedgerInfo(this.path);
    if (stored === undefined || !isCollectorChange(infoToProto(this.current), stored.value)) return false;
    this.current = infoFromProto(stored.value);
    this.currentVersion = stored.version;
    return true;
  }

  /** Learns whether a write that failed without an answer landed. */
  private async settleUncertainWrite(write: UncertainWrite): Promise<void> {
    const stored = await this.metadata.getManagedLedgerInfo(this.path);
    this.uncertain = undefined;
    if (stored?.version === this.currentVersion) return;
    if (stored?.version === this.currentVersion + 1 && equals(ManagedLedgerInfoSchema, stored.value, write.proto)) {
      this.currentVersion = stored.version;
      this.current = write.model;
      return;
    }
    // The collector removed markers after our write landed, or instead of it: either way the node is ours.
    if (
      stored !== undefined &&
      stored.version > this.currentVersion &&
      (isCollectorChange(write.proto, stored.value) || isCollectorChange(infoToProto(this.current), stored.value))
    ) {
      this.currentVersion = stored.version;
      this.current = infoFromProto(stored.value);
      return;
    }
    throw this.fence(new Error(`ManagedLedgerInfo at ${this.path} changed to version ${stored?.version ?? 'none'}`));
  }

  private fence(cause: unknown): Error {
    this.fenced = true;
    const fencedError = managedLedgerFencedError(this.path, cause);
    this.onConflict(fencedError);
    return fencedError;
  }
}
