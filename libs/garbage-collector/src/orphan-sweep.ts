import { fromBinary } from '@bufbuild/protobuf';
import { OwnerTag } from '@ledgerline/ledger-store';
import { ManagedLedgerInfoSchema } from '@ledgerline/proto';
import type { CollectorContext, PassCounts } from './collector-context.js';
import { addCursorLedgers } from './cursor-ledgers.js';

/** Ledger ids per ledger-store listing page. */
const SWEEP_PAGE = 1_000;

/** Every ledger id a managed ledger references: its list, its markers, its cursors' ledgers. */
async function referencesOf(ctx: CollectorContext, path: string): Promise<Set<number>> {
  const node = await ctx.metadata.get(path);
  const referenced = new Set<number>();
  if (node === undefined) return referenced;
  const info = fromBinary(ManagedLedgerInfoSchema, node.value);
  for (const ledger of info.ledgerInfo) referenced.add(Number(ledger.ledgerId));
  for (const marker of info.deletableLedgers) referenced.add(Number(marker.ledgerId));
  await addCursorLedgers(ctx, path, referenced);
  return referenced;
}

/**
 * The orphan sweep: pages through the ledger store from where the last sweep
 * stopped, at most maxSweepLedgersPerPass ledgers, and deletes each ledger
 * older than orphanGraceMs that no metadata references (no ledger list, no
 * cursor, no marker of the managed ledger its owner tags name), after
 * re-reading those references right before the delete (BookKeeper's
 * verify-before-GC). A ledger without owner tags cannot be attributed: it is
 * counted and logged, never deleted. Marked ledgers are left to the markers.
 */
export class OrphanSweep {
  /** The last ledger id looked at; the next sweep continues after it (undefined: from the start). */
  private resumeAfter: number | undefined;

  constructor(private readonly ctx: CollectorContext) {}

  async sweep(counts: PassCounts): Promise<void> {
    const { ctx } = this;
    const references = new Map<string, Set<number>>();
    let budget = ctx.config.maxSweepLedgersPerPass;
    while (budget > 0) {
      const page = await ctx.ledgerStore.list({
        ...(this.resumeAfter === undefined ? {} : { after: this.resumeAfter }),
        limit: Math.min(SWEEP_PAGE, budget),
      });
      for (const ledgerId of page.ledgerIds) {
        await this.check(ledgerId, references, counts);
        this.resumeAfter = ledgerId;
      }
      budget -= page.ledgerIds.length;
      if (page.next === undefined) {
        this.resumeAfter = undefined;
        return;
      }
    }
  }

  private async check(ledgerId: number, references: Map<string, Set<number>>, counts: PassCounts): Promise<void> {
    const { ctx } = this;
    counts.ledgersSwept++;
    const info = await ctx.ledgerStore.info(ledgerId);
    if (info === undefined || ctx.now() - info.createdAtMs < ctx.config.orphanGraceMs) return;
    const path = info.ownerTags[OwnerTag.managedLedger];
    if (path === undefined || !path.startsWith('/')) {
      counts.orphansUntagged++;
      ctx.logger.warn({ ledgerId }, 'a ledger without owner tags cannot be attributed: left for a person');
      return;
    }
    let known = references.get(path);
    if (known === undefined) {
      known = await referencesOf(ctx, path);
      references.set(path, known);
    }
    if (known.has(ledgerId)) return;
    // Verify right before deleting: the references read earlier in this sweep may be stale.
    const fresh = await referencesOf(ctx, path);
    references.set(path, fresh);
    if (fresh.has(ledgerId)) return;
    await ctx.ledgerStore.delete(ledgerId);
    counts.orphansDeleted++;
    ctx.metrics.orphansDeleted.inc();
    ctx.logger.info(
      { ledgerId, managedLedger: path, createdAtMs: info.createdAtMs },
      'orphan ledger deleted: no metadata references it',
    );
  }
}
