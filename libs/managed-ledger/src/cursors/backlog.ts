import type { LedgerContext } from '../context.js';
import type { AckState } from './cursor-acks.js';
import type { EntryOffsetTable } from '../ledgers/entry-offset-table.js';
import { findLedger, type LedgerView } from '../ledgers/ledger-views.js';

/**
 * The exact number of messages a cursor has not consumed, from offsets:
 * last offset - offset at mark-delete - messages in entries acknowledged
 * above it - batch indexes acknowledged. Per-entry offsets come from memory
 * (the open ledger), from LedgerInfo, or from one scan of a closed ledger.
 */
export async function messageBacklog(
  ctx: LedgerContext,
  views: readonly LedgerView[],
  state: AckState,
): Promise<number> {
  const tables = new Map<number, EntryOffsetTable>();
  const ledgerIds = new Set<number>([state.markDelete.ledgerId, ...state.acked.ledgerIds()]);
  for (const ledgerId of ledgerIds) {
    const table = await offsetTable(ctx, views, ledgerId);
    if (table !== undefined) tables.set(ledgerId, table);
  }
  const md = state.markDelete;
  const mdView = findLedger(views, md.ledgerId);
  const mdOffset =
    md.entryId < 0 || mdView === undefined
      ? (mdView?.firstOffset ?? firstOffsetAfter(views, md.ledgerId)) - 1
      : tables.get(md.ledgerId)!.lastOffsetOf(md.entryId);
  let acknowledged = 0;
  state.acked.forEachRange((ledgerId, first, last) => {
    const table = tables.get(ledgerId);
    acknowledged += table === undefined ? last - first + 1 : table.messagesIn(first, last);
  });
  for (const batch of state.batchAcks.values()) acknowledged += batch.ackedIndexes.length;
  return Math.max(0, ctx.assigner.committedEnd - mdOffset - acknowledged);
}

/** The per-entry offsets of a ledger of the managed ledger; undefined for a ledger it does not hold. */
export async function offsetTable(
  ctx: LedgerContext,
  views: readonly LedgerView[],
  ledgerId: number,
): Promise<EntryOffsetTable | undefined> {
  if (ctx.current !== undefined && ctx.current.ledgerId === ledgerId) return ctx.current.offsets;
  const summary = ctx.keeper.info.ledgers.find((l) => l.ledgerId === ledgerId);
  if (summary === undefined || findLedger(views, ledgerId) === undefined) return undefined;
  return ctx.offsetTables.load(summary);
}

function firstOffsetAfter(views: readonly LedgerView[], ledgerId: number): number {
  const next = views.find((v) => v.ledgerId > ledgerId);
  const last = views[views.length - 1];
  return next?.firstOffset ?? (last === undefined ? 0 : last.lastOffset + 1);
}
