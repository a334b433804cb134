import type { LedgerComponentName } from '@ledgerline/ledger-info';

/** One marked ledger as this collector instance tracks it between passes. */
export interface PendingDeletion {
  ledgerId: number;
  managedLedgerPath: string;
  component: LedgerComponentName;
  cursorName?: string;
  markedAtMs: number;
  attempts: number;
  lastError: string;
  nextAttemptAtMs: number;
  /** Set when the collector refuses to delete it: a person must look (OWNER_TAG_MISMATCH). */
  refusedReason?: string;
}

/** Retry delays never exceed this exponent of two times the base (2^30 ms is already 12 days). */
const MAX_BACKOFF_EXPONENT = 30;

/**
 * The delay before the next attempt after `attempts` failures: exponential
 * with full jitter (AWS's "full jitter", the policy exponential-backoff's
 * `jitter: 'full'` applies within one call), here spread over passes since a
 * failed deletion is retried by later passes, forever.
 */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), MAX_BACKOFF_EXPONENT);
  const ceiling = Math.min(maxMs, baseMs * 2 ** exponent);
  return Math.round(random() * ceiling);
}

/**
 * Markers seen in this instance's shards, with their attempts and last error
 * (ListPendingDeletions). Rebuilt from metadata by every pass: what a managed
 * ledger no longer marks is forgotten; attempts start again after a restart.
 */
export class PendingTable {
  private readonly byLedger = new Map<number, PendingDeletion>();
  private readonly byPath = new Map<string, Set<number>>();

  get size(): number {
    return this.byLedger.size;
  }

  get(ledgerId: number): PendingDeletion | undefined {
    return this.byLedger.get(ledgerId);
  }

  /** Replaces what is known of one managed ledger's markers, keeping attempts of the ones still marked. */
  sync(
    managedLedgerPath: string,
    markers: readonly Omit<PendingDeletion, 'attempts' | 'lastError' | 'nextAttemptAtMs'>[],
  ): void {
    const previous = this.byPath.get(managedLedgerPath) ?? new Set<number>();
    const next = new Set<number>();
    for (const marker of markers) {
      next.add(marker.ledgerId);
      const known = this.byLedger.get(marker.ledgerId);
      if (known !== undefined && known.managedLedgerPath === managedLedgerPath) continue;
      this.byLedger.set(marker.ledgerId, { ...marker, attempts: 0, lastError: '', nextAttemptAtMs: 0 });
    }
    for (const ledgerId of previous) if (!next.has(ledgerId)) this.byLedger.delete(ledgerId);
    if (next.size === 0) this.byPath.delete(managedLedgerPath);
    else this.byPath.set(managedLedgerPath, next);
  }

  forgetPath(managedLedgerPath: string): void {
    this.sync(managedLedgerPath, []);
  }

  /** Forgets managed ledgers outside `keep` (their shard moved to another instance). */
  retainPaths(keep: (managedLedgerPath: string) => boolean): void {
    for (const path of [...this.byPath.keys()]) if (!keep(path)) this.forgetPath(path);
  }

  /** Ascending by ledger id, after `afterLedgerId`, at most `limit`. */
  page(afterLedgerId: number, limit: number): PendingDeletion[] {
    return [...this.byLedger.values()]
      .filter((p) => p.ledgerId > afterLedgerId)
      .sort((a, b) => a.ledgerId - b.ledgerId)
      .slice(0, limit);
  }

  oldestMarkedAtMs(): number | undefined {
    let oldest: number | undefined;
    for (const p of this.byLedger.values()) if (oldest === undefined || p.markedAtMs < oldest) oldest = p.markedAtMs;
    return oldest;
  }

  refusedCount(): number {
    let count = 0;
    for (const p of this.byLedger.values()) if (p.refusedReason !== undefined) count++;
    return count;
  }
}
