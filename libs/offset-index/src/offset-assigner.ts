import { MAX_BATCH_SIZE } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import type { DecodedEntryMetadata } from './entry-framing.js';
import { checkIntegerIn } from './index-options.js';
import {
  DEFAULT_MAX_APPEND_ATTEMPTS,
  DEFAULT_MAX_PENDING_ENTRIES,
  MAX_APPEND_ATTEMPTS_LIMIT,
  MAX_OFFSET,
  MAX_PENDING_ENTRIES_LIMIT,
} from './limits.js';
import { OffsetIndexReason } from './errors.js';

export interface OffsetAssignerOptions {
  /** The most entries awaiting the store's acknowledgement (default 10,000, at most 1,000,000). */
  maxPendingEntries?: number;
  /** The most times one entry may be attempted before the assigner asks for recovery (default 5, at most 100). */
  maxAppendAttempts?: number;
}

/** The offsets handed to one entry: messages `firstOffset..index` (index is what the entry's metadata carries). */
export interface AssignedOffsets {
  readonly firstOffset: number;
  readonly index: number;
  readonly batchSize: number;
}

/**
 * The offsets recorded for the ledgers before the last one. `lastOffset` must
 * come from what the store holds (LedgerInfo.last_offset of the newest
 * non-empty closed ledger), never from an in-memory counter, or a restart
 * could skip offsets that were never written.
 */
export interface RecoveryLedgerInfo {
  lastOffset?: number;
}

/** What to do after a failed append: send the same entries again, or recover from the store. */
export type AppendFailureVerdict = 'retry' | 'recover';

interface PendingEntry {
  offsets: AssignedOffsets;
  attempts: number;
}

/**
 * Hands out continuous offsets to entries as a managed ledger appends them,
 * in append order. Only the committed end (the index of the last entry the
 * store acknowledged) is visible to readers, so no reader ever sees an offset
 * that is not durable. A failed append keeps its offsets: the same entries
 * are sent again with the same offsets, so no gap and no duplicate appears.
 * The store acknowledges in append order; an acknowledgement out of that
 * order is a bug in the caller and fails loudly.
 *
 * A new assigner must be recovered first (`recover(undefined, {})` for a new
 * topic). After too many attempts at one entry it stops handing out offsets
 * until it is recovered again from what the store actually holds.
 */
export class OffsetAssigner {
  private readonly maxPendingEntries: number;
  private readonly maxAppendAttempts: number;
  private readonly pendingEntries: PendingEntry[] = [];
  private pendingHead = 0;
  private next = -1;
  private committed = -1;
  private state: 'unrecovered' | 'ready' | 'needs-recovery' = 'unrecovered';

  constructor(options: OffsetAssignerOptions = {}) {
    this.maxPendingEntries = options.maxPendingEntries ?? DEFAULT_MAX_PENDING_ENTRIES;
    this.maxAppendAttempts = options.maxAppendAttempts ?? DEFAULT_MAX_APPEND_ATTEMPTS;
    checkIntegerIn(
      this.maxPendingEntries,
      1,
      MAX_PENDING_ENTRIES_LIMIT,
      'maxPendingEntries',
      OffsetIndexReason.INVALID_ASSIGNER_OPTION,
    );
    checkIntegerIn(
      this.maxAppendAttempts,
      1,
      MAX_APPEND_ATTEMPTS_LIMIT,
      'maxAppendAttempts',
      OffsetIndexReason.INVALID_ASSIGNER_OPTION,
    );
  }

  /** The index of the last entry the store acknowledged; -1 when the topic has none. What readers may see. */
  get committedEnd(): number {
    return this.committed;
  }

  /** The offset the next assigned entry will start at. */
  get nextOffset(): number {
    return this.next;
  }

  /** Entries assigned but not yet acknowledged, oldest first: what a retry sends again, in this order. */
  get pending(): readonly AssignedOffsets[] {
    return this.pendingEntries.slice(this.pendingHead).map((entry) => entry.offsets);
  }

  get needsRecovery(): boolean {
    return this.state !== 'ready';
  }

  /**
   * Restores the next offset after a restart (or after `fail` asked for it),
   * from the metadata of the last entry in the store and the recorded offsets
   * of earlier ledgers; whichever is larger wins, as in Pulsar. Pending
   * entries are forgotten: call this once the last ledger is fenced, so the
   * last entry is final.
   */
  recover(lastEntryMetadata: DecodedEntryMetadata | undefined, ledgerInfo: RecoveryLedgerInfo): void {
    let last = -1;
    if (ledgerInfo?.lastOffset !== undefined) {
      checkIntegerIn(
        ledgerInfo.lastOffset,
        -1,
        MAX_OFFSET - 1,
        'ledgerInfo.lastOffset',
        OffsetIndexReason.INVALID_RECOVERY_STATE,
      );
      last = ledgerInfo.lastOffset;
    }
    if (lastEntryMetadata !== undefined) {
      if (lastEntryMetadata.index === undefined) {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          OffsetIndexReason.ENTRY_WITHOUT_OFFSET,
          'the last entry carries no index, so the next offset cannot be recovered from it',
        );
      }
      checkIntegerIn(
        lastEntryMetadata.index,
        0,
        MAX_OFFSET - 1,
        'lastEntryMetadata.index',
        OffsetIndexReason.INVALID_RECOVERY_STATE,
      );
      last = Math.max(last, lastEntryMetadata.index);
    }
    this.pendingEntries.length = 0;
    this.pendingHead = 0;
    this.committed = last;
    this.next = last + 1;
    this.state = 'ready';
  }

  /** Reserves offsets for the next entry, of `batchSize` messages. */
  assign(batchSize: number): AssignedOffsets {
    this.checkReady();
    checkIntegerIn(batchSize, 1, MAX_BATCH_SIZE, 'batchSize', OffsetIndexReason.INVALID_BATCH_SIZE);
    if (this.pendingEntries.length - this.pendingHead >= this.maxPendingEntries) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        OffsetIndexReason.TOO_MANY_PENDING_ENTRIES,
        `${this.maxPendingEntries} entries already await the store's acknowledgement; wait for them before appending more`,
      );
    }
    if (this.next + batchSize - 1 > MAX_OFFSET) {
      throw new LedgerlineError(
        'OUT_OF_RANGE',
        OffsetIndexReason.OFFSETS_EXHAUSTED,
        'the topic has used every offset up to 2^53 - 1',
      );
    }
    const offsets: AssignedOffsets = { firstOffset: this.next, index: this.next + batchSize - 1, batchSize };
    this.pendingEntries.push({ offsets, attempts: 1 });
    this.next += batchSize;
    return offsets;
  }

  /** The store acknowledged `offsets`, which must be the oldest pending entry: readers may now see it. */
  acknowledge(offsets: AssignedOffsets): void {
    this.checkReady();
    const head = this.pendingEntries[this.pendingHead];
    if (head === undefined || head.offsets.index !== offsets?.index) {
      throw new LedgerlineError(
        'INTERNAL',
        OffsetIndexReason.OFFSETS_ACKNOWLEDGED_OUT_OF_ORDER,
        `acknowledged index ${String(offsets?.index)}, but the oldest pending entry is ${head === undefined ? 'none' : head.offsets.index}`,
      );
    }
    this.committed = head.offsets.index;
    this.pendingHead += 1;
    this.compact();
  }

  /**
   * The store failed to append `offsets`. Its offsets and those of every later
   * pending entry stay reserved: the verdict is 'retry' (send the pending
   * entries again, in order, with the same bytes) until the entry has been
   * tried maxAppendAttempts times; then 'recover', and the assigner hands out
   * nothing until `recover` is called with what the store holds.
   */
  fail(offsets: AssignedOffsets): AppendFailureVerdict {
    this.checkReady();
    const entry = this.pendingEntries
      .slice(this.pendingHead)
      .find((pending) => pending.offsets.index === offsets?.index);
    if (entry === undefined) {
      throw new LedgerlineError(
        'INTERNAL',
        OffsetIndexReason.UNKNOWN_PENDING_ENTRY,
        `index ${String(offsets?.index)} is not pending`,
      );
    }
    if (entry.attempts >= this.maxAppendAttempts) {
      this.state = 'needs-recovery';
      return 'recover';
    }
    entry.attempts += 1;
    return 'retry';
  }

  private checkReady(): void {
    if (this.state === 'ready') return;
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      this.state === 'unrecovered' ? 'OFFSET_ASSIGNER_NOT_RECOVERED' : 'OFFSET_ASSIGNER_NEEDS_RECOVERY',
      'the offset assigner must be recovered from the last stored entry before it hands out offsets',
    );
  }

  /** Drops acknowledged entries from the front of the queue once they are the larger part of it. */
  private compact(): void {
    if (this.pendingHead > 64 && this.pendingHead * 2 > this.pendingEntries.length) {
      this.pendingEntries.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
  }
}
