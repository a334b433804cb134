import { encodeLedgersDeletable, LEDGERS_DELETABLE_SUBJECT } from '@ledgerline/bus';
import type { LedgerContext } from '../context.js';
import { discardIfUnnamed, fenceAndClose } from './ledger-factory.js';
import { markDeleting, withDeletable, type DeletableLedgerRecord } from '@ledgerline/ledger-info';

/**
 * Records ledgers deletable in ManagedLedgerInfo, one compare-and-set: cursor
 * ledgers no cursor node names any more (switched away from, or of a
 * deleted cursor). If the write fails without an answer, the next update
 * carries them; if another owner took the topic, nobody can name them, so
 * they are deleted here rather than left behind.
 */
export async function markDeletable(ctx: LedgerContext, records: DeletableLedgerRecord[]): Promise<void> {
  if (records.length === 0) return;
  try {
    await ctx.keeper.update((info) => {
      info.deletableLedgers = withDeletable(info, records);
    });
  } catch (err) {
    ctx.keeper.markLater(records);
    if (ctx.keeper.isFenced) await discardUnrecordedLedgers(ctx);
    throw err;
  }
  publishDeletable(
    ctx,
    records.map((r) => r.ledgerId),
  );
}

/** A hint for the garbage collector: these ledgers were just marked deletable. */
export function publishDeletable(ctx: LedgerContext, ledgerIds: number[]): void {
  const bus = ctx.bus;
  if (bus === undefined) return;
  const payload = encodeLedgersDeletable({ name: ctx.name, ledgerIds });
  void bus.publish(LEDGERS_DELETABLE_SUBJECT, payload).catch(() => undefined);
}

/**
 * Ledgers whose recording was in doubt, and deletable markers not yet
 * written, when this owner stops writing the node (fenced, or closing
 * without recording): the ones the node does not name go, since no later
 * update of ours will record them.
 */
export async function discardUnrecordedLedgers(ctx: LedgerContext): Promise<void> {
  const ledgerIds = [...ctx.unrecordedLedgers, ...ctx.keeper.takePending().map((r) => r.ledgerId)];
  ctx.unrecordedLedgers.clear();
  await Promise.all(ledgerIds.map((ledgerId) => discardIfUnnamed(ctx.metadata, ctx.store, ctx.path, ledgerId)));
}

/**
 * Phase one of deleting the topic, once appends and cursors are stopped: in
 * one compare-and-set the managed ledger is marked DELETING and every ledger
 * (data and cursor) becomes deletable; then the cursor nodes go. The garbage
 * collector removes the ledgers and then the node.
 */
export async function recordDeletion(
  ctx: LedgerContext,
  cursorLedgers: { ledgerId: number; cursorName: string }[],
  cursorNames: string[],
): Promise<void> {
  const current = ctx.current;
  if (current !== undefined && !current.sealed) {
    await fenceAndClose(ctx.store, current.ledgerId).catch(() => undefined);
  }
  const nowMs = ctx.now();
  // Ledgers whose recording was in doubt are marked too: the topic's node is the last place that can name them.
  const unrecorded = [...ctx.unrecordedLedgers].map((ledgerId) => ({
    ledgerId,
    component: 'managed-ledger' as const,
    markedAtMs: nowMs,
  }));
  await ctx.keeper.update((info) => {
    Object.assign(info, markDeleting(info, cursorLedgers, nowMs));
    info.deletableLedgers = withDeletable(info, unrecorded);
  });
  ctx.unrecordedLedgers.clear();
  // The markers are safe in the managed ledger node; the cursor nodes below it can go.
  for (const name of cursorNames) {
    await ctx.metadata.deleteCursorInfo(ctx.path, name).catch(() => undefined);
  }
  publishDeletable(ctx, [...ctx.keeper.info.deletableLedgers.map((d) => d.ledgerId)]);
  ctx.cache.clear();
}
