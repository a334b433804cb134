import { equals } from '@bufbuild/protobuf';
import { ManagedLedgerInfoSchema, type ManagedLedgerInfo } from '@ledgerline/proto';
import { isBadVersion, managedLedgerFencedError } from './errors.js';
import {
  cloneInfo,
  infoToProto,
  withDeletable,
  type DeletableLedgerRecord,
  type ManagedLedgerInfoModel,
} from './managed-ledger-info.js';
import type { ManagedLedgerMetadata } from './metadata-access.js';

/** A write whose outcome we did not learn (the call failed, the write may still have landed). */
interface UncertainWrite {
  proto: ManagedLedgerInfo;
  model: ManagedLedgerInfoModel;
}

/**
 * The managed ledger's view of its ManagedLedgerInfo and the version it read.
 * Updates run one at a time, each a compare-and-set on the version the last
 * one produced, so within a process they never race; a lost compare-and-set
 * can then only mean that another process wrote the node: another owner.
 * A write that failed without an answer is checked by re-reading before the
 * next one, so a write that did land is never mistaken for another owner's.
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
      if (this.fenced) throw managedLedgerFencedError(this.path);
      if (this.uncertain !== undefined) await this.settleUncertainWrite(this.uncertain);
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
        if (isBadVersion(err)) throw this.fence(err);
        this.uncertain = { proto, model: draft };
        throw err;
      }
      this.current = draft;
      this.pending = this.pending.filter((r) => !carried.includes(r));
      return result;
    };
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
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
    throw this.fence(new Error(`ManagedLedgerInfo at ${this.path} changed to version ${stored?.version ?? 'none'}`));
  }

  private fence(cause: unknown): Error {
    this.fenced = true;
    const fencedError = managedLedgerFencedError(this.path, cause);
    this.onConflict(fencedError);
    return fencedError;
  }
}
