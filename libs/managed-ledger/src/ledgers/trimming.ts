import { type Position } from '@ledgerline/cursor-codec';
import type { LedgerView } from './ledger-views.js';

export interface TrimPolicy {
  /** -1 keeps consumed data forever, 0 not at all (Pulsar's RetentionPolicies). */
  retentionTimeMs: number;
  retentionSizeBytes: number;
}

/**
 * The ledgers trimming may remove, oldest first (PIP-129 phase 1 marks them
 * deletable). Pulsar's rule: walk the ledgers from the oldest; stop at the
 * first one a cursor still needs (not wholly at or below the slowest
 * mark-delete position) or that retention keeps (neither older than the
 * retention time nor beyond the retention size). The last ledger (the
 * current one, or the end of a closed topic) is never removed, nor an open
 * one. With no cursors, only retention decides.
 */
export function ledgersToTrim(
  views: readonly LedgerView[],
  slowestMarkDelete: Position | undefined,
  policy: TrimPolicy,
  nowMs: number,
): LedgerView[] {
  const totalSizeBytes = views.reduce((sum, view) => sum + view.sizeBytes, 0);
  const trimmed: LedgerView[] = [];
  let sizeToDeleteBytes = 0;
  for (let index = 0; index < views.length - 1; index++) {
    const view = views[index] as LedgerView;
    if (view.open || view.closedAtMs === undefined) break;
    if (!consumed(view, slowestMarkDelete)) break;
    const expired = policy.retentionTimeMs >= 0 && nowMs - view.closedAtMs > policy.retentionTimeMs;
    const overQuota = policy.retentionSizeBytes >= 0 && totalSizeBytes - sizeToDeleteBytes > policy.retentionSizeBytes;
    if (!(expired || overQuota) && view.entries > 0) break;
    trimmed.push(view);
    sizeToDeleteBytes += view.sizeBytes;
  }
  return trimmed;
}

/** True when every entry of the ledger is at or below the mark-delete position. */
function consumed(view: LedgerView, markDelete: Position | undefined): boolean {
  if (markDelete === undefined || view.entries === 0) return true;
  if (view.ledgerId < markDelete.ledgerId) return true;
  return view.ledgerId === markDelete.ledgerId && markDelete.entryId >= view.entries - 1;
}

/**
 * The ledgers deleting records before `offset` removes, oldest first: each
 * whole ledger whose messages are all below it, up to the first that is open
 * or holds `offset` or later. The last ledger is never removed, as in
 * ledgersToTrim. Cursors decide nothing: the caller moved them past first.
 */
export function ledgersBelowOffset(views: readonly LedgerView[], offset: number): LedgerView[] {
  const below: LedgerView[] = [];
  for (let index = 0; index < views.length - 1; index++) {
    const view = views[index] as LedgerView;
    if (view.open || view.closedAtMs === undefined || view.lastOffset >= offset) break;
    below.push(view);
  }
  return below;
}
