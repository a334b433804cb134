import type { Position } from '@ledgerline/cursor-codec';
import type { LedgerContext } from '../context.js';
import { publishDeletable } from './deletable-ledgers.js';
import { publishManagedLedgerChange } from './ledger-rollover.js';
import { ledgerViews } from './ledger-views.js';
import {
  LOW_WATERMARK_PROPERTY,
  storedLowWatermark,
  withDeletable,
  type ManagedLedgerInfoModel,
} from '@ledgerline/ledger-info';
import { ledgersBelowOffset, ledgersToTrim } from './trimming.js';

/**
 * Trimming of one managed ledger (PIP-129 phase 1): runs one at a time, each
 * removing the ledgers no cursor needs and retention does not keep, and
 * recording them deletable in the same compare-and-set. The rule itself is
 * ledgersToTrim (trimming.ts).
 */
export class LedgerTrimmer {
  private chain: Promise<unknown> = Promise.resolve();
  private waiting: Promise<number[]> | undefined;
  /** False until every stored cursor is recovered: the slowest cursor is not known before. */
  private allowed = false;

  constructor(
    private readonly ctx: LedgerContext,
    private readonly cursors: { slowestMarkDelete(): Position | undefined },
    private readonly owner: { readonly serving: boolean },
  ) {}

  /** Every stored cursor is recovered: trimming may start. */
  allow(): void {
    this.allowed = true;
  }

  /** Trims in the background; a failed run is logged and the next one tries again. */
  schedule(): void {
    void this.trim().catch((err: unknown) =>
      this.ctx.logger.warn(
        { managedLedger: this.ctx.name, error: String(err) },
        'trimming failed; it runs again later',
      ),
    );
  }

  /** Runs a trim (or joins the one about to start); resolves with the ledger ids trimmed. */
  trim(): Promise<number[]> {
    if (!this.allowed || !this.owner.serving) return Promise.resolve([]);
    // One trim runs at a time; callers arriving meanwhile share the next run, which sees the latest cursors.
    if (this.waiting !== undefined) return this.waiting;
    const next = this.chain.then(() => {
      this.waiting = undefined;
      return this.trimOnce();
    });
    this.waiting = next;
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Deletes the records before `offset` (Kafka's DeleteRecords), after any
   * trim under way: in one compare-and-set, the low watermark becomes
   * `offset` (never lower than it was) and the ledgers wholly below it are
   * removed and recorded deletable, as many as the deletable markers have
   * room for (the rest go with a later call or trim). Resolves with the low
   * watermark stored.
   */
  trimBefore(offset: number): Promise<number> {
    const next = this.chain.then(() => this.trimBeforeOnce(offset));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async trimBeforeOnce(offset: number): Promise<number> {
    const ctx = this.ctx;
    const trimmed = await ctx.keeper.update((info) => {
      const lowWatermark = Math.max(storedLowWatermark(info), offset);
      info.properties.set(LOW_WATERMARK_PROPERTY, String(lowWatermark));
      const room = Math.max(ctx.config.maxDeletableLedgers - info.deletableLedgers.length, 0);
      const views = ledgerViews(info.ledgers, ctx.current);
      return this.removeLedgers(info, ledgersBelowOffset(views, lowWatermark).slice(0, room));
    });
    this.afterTrim(trimmed);
    return storedLowWatermark(ctx.keeper.info);
  }

  private async trimOnce(): Promise<number[]> {
    const ctx = this.ctx;
    const pendingMarkers = ctx.keeper.info.deletableLedgers.length;
    if (pendingMarkers >= ctx.config.maxDeletableLedgers) {
      ctx.logger.warn({ managedLedger: ctx.name, pendingMarkers }, 'trimming paused: the garbage collector is behind');
      return [];
    }
    const choose = (info: ManagedLedgerInfoModel) => {
      const room = ctx.config.maxDeletableLedgers - info.deletableLedgers.length;
      const views = ledgerViews(info.ledgers, ctx.current);
      return ledgersToTrim(views, this.cursors.slowestMarkDelete(), ctx.config, ctx.now()).slice(0, Math.max(room, 0));
    };
    if (choose(ctx.keeper.info).length === 0) return [];
    const trimmed = await ctx.keeper.update((info) => this.removeLedgers(info, choose(info)));
    this.afterTrim(trimmed);
    return trimmed;
  }

  /** Removes the ledgers from the info and records them deletable, in the update under way; their ids. */
  private removeLedgers(info: ManagedLedgerInfoModel, removed: readonly { ledgerId: number }[]): number[] {
    const ids = new Set(removed.map((v) => v.ledgerId));
    info.ledgers = info.ledgers.filter((l) => !ids.has(l.ledgerId));
    const markedAtMs = this.ctx.now();
    const records = [...ids].map((ledgerId) => ({ ledgerId, component: 'managed-ledger' as const, markedAtMs }));
    info.deletableLedgers = withDeletable(info, records);
    return [...ids];
  }

  private afterTrim(trimmed: number[]): void {
    const ctx = this.ctx;
    for (const ledgerId of trimmed) {
      ctx.cache.evictLedger(ledgerId);
      ctx.offsetTables.forget(ledgerId);
    }
    if (trimmed.length > 0) {
      ctx.metrics.trimmedLedgers.inc({ topic: ctx.topic }, trimmed.length);
      publishDeletable(ctx, trimmed);
      // Read-only views drop the trimmed ledgers (and move readers past them) without waiting for their refresh.
      publishManagedLedgerChange(ctx, 'info-changed');
    }
  }
}
