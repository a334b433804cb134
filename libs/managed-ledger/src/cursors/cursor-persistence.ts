import type { LedgerWriter } from '@ledgerline/ledger-store';
import { encodeCursorState, toSnapshotEntries, type CursorState } from '@ledgerline/cursor-codec';
import type { LedgerContext } from '../context.js';
import { CursorInfoKeeper, NO_CURSOR_LEDGER, type CursorInfoModel } from './cursor-info.js';
import { isBadVersion } from '../errors.js';
import { createOwnedLedger, discardUnreferencedLedger } from '../ledgers/ledger-factory.js';
import type { DeletableLedgerRecord } from '@ledgerline/ledger-info';

/** What a snapshot write produced, for metrics and the benchmark. */
export interface SnapshotWrite {
  bytes: number;
  entries: number;
  where: 'inline' | 'ledger' | 'new-ledger';
  rangesDropped: number;
}

/** The cursor's own ledger while we may append to it. */
interface CursorLedger {
  writer: LedgerWriter;
  snapshots: number;
  createdAtMs: number;
}

/**
 * Where a cursor's state goes (Pulsar's scheme, with PIP-381 chunking):
 * small states live inline in ManagedCursorInfo while the cursor has no
 * ledger; otherwise each snapshot is appended to the cursor ledger as
 * toSnapshotEntries gives it (one entry, or chunks and a footer). After
 * maxSnapshotsPerLedger snapshots, or maxCursorLedgerAgeMs, the cursor moves
 * to a new ledger: the new ledger gets the latest snapshot first, then the
 * node is switched by compare-and-set, then the old ledger is marked
 * deletable, so a crash at any point leaves a node that names a ledger
 * holding a complete snapshot.
 */
export class CursorPersistence {
  private ledger: CursorLedger | undefined;
  /**
   * Cursor ledgers the node may no longer name: the one a switch moves away
   * from, and a new one whose naming write failed without an answer. After
   * the next successful node write, those it does not name are retired.
   */
  private readonly unnamed = new Set<number>();

  constructor(
    private readonly ctx: LedgerContext,
    readonly keeper: CursorInfoKeeper,
    private readonly markDeletable: (records: DeletableLedgerRecord[]) => Promise<void>,
  ) {}

  /** The cursor ledger the node names, or NO_CURSOR_LEDGER. */
  get cursorLedgerId(): number {
    return this.keeper.current.cursorsLedgerId;
  }

  /**
   * Persists `state`; `node` carries what the node holds besides the snapshot.
   * With `writeNode` the node is rewritten even when the snapshot goes to the
   * ledger (a reset must bump the node's reset epoch).
   */
  async persist(
    state: CursorState,
    node: Pick<CursorInfoModel, 'resetEpoch' | 'lastActiveMs'>,
    writeNode = false,
  ): Promise<SnapshotWrite> {
    const { config } = this.ctx;
    const encoded = encodeCursorState(state, { format: 'auto', maxRangesToPersist: config.cursor.maxRangesToPersist });
    // The result is the encoded bytes, carrying the report of what was left out.
    const bytes: Uint8Array = encoded;
    if (encoded.rangesDropped > 0) this.reportDropped(encoded.rangesDropped);
    const base: CursorInfoModel = {
      ...this.keeper.current,
      markDelete: state.markDelete,
      properties: new Map(state.properties),
      cursorProperties: new Map(state.cursorProperties),
      ...node,
    };
    const small = bytes.length <= config.cursor.inlineSnapshotMaxBytes;
    const rangesDropped = encoded.rangesDropped;
    if (this.cursorLedgerId === NO_CURSOR_LEDGER && small) {
      await this.keeper.write({ ...base, inlineSnapshot: bytes });
      await this.retireUnnamed();
      return { bytes: bytes.length, entries: 0, where: 'inline', rangesDropped };
    }
    const entries = toSnapshotEntries(bytes, { maxEntrySize: config.cursor.snapshotMaxEntrySizeBytes });
    const ledger = this.ledger;
    if (ledger !== undefined && !this.rolloverDue(ledger)) {
      try {
        await ledger.writer.append(entries);
      } catch (err) {
        this.ledger = undefined;
        throw err;
      }
      ledger.snapshots++;
      if (writeNode) {
        const { inlineSnapshot: _inline, ...withoutInline } = base;
        await this.keeper.write(withoutInline);
        await this.retireUnnamed();
      }
      return { bytes: bytes.length, entries: entries.length, where: 'ledger', rangesDropped };
    }
    await this.switchLedger(base, small ? bytes : undefined, entries);
    return {
      bytes: bytes.length,
      entries: entries.length,
      where: small ? 'inline' : 'new-ledger',
      rangesDropped,
    };
  }

  /** Stops appending; the ledger stays as the node names it. */
  detach(): void {
    this.ledger = undefined;
  }

  /**
   * After another owner took the cursor: the ledgers this owner may have
   * stopped naming go, unless the node names one (a write of ours that landed
   * before the new owner read it; the new owner retires that one itself).
   */
  async abandonUnnamed(): Promise<void> {
    const ledgerIds = [...this.unnamed];
    this.unnamed.clear();
    if (ledgerIds.length === 0) return;
    const stored = await this.ctx.metadata.getCursorInfo(this.ctx.path, this.keeper.cursorName).catch(() => null);
    if (stored === null) return;
    const named = stored === undefined ? NO_CURSOR_LEDGER : Number(stored.value.cursorsLedgerId);
    for (const ledgerId of ledgerIds) {
      if (ledgerId !== named) await this.ctx.store.delete(ledgerId).catch(() => undefined);
    }
  }

  /** Every cursor ledger of this cursor: the one the node names and any it may have stopped naming. */
  ledgersToRetire(): number[] {
    const all = new Set(this.unnamed);
    if (this.cursorLedgerId !== NO_CURSOR_LEDGER) all.add(this.cursorLedgerId);
    return [...all];
  }

  private rolloverDue(ledger: CursorLedger): boolean {
    const { cursor } = this.ctx.config;
    return (
      ledger.snapshots >= cursor.maxSnapshotsPerLedger ||
      this.ctx.now() - ledger.createdAtMs >= cursor.maxCursorLedgerAgeMs
    );
  }

  /**
   * Moves the cursor to a new ledger holding `entries` (or back inline when
   * `inline` is given), then retires the ledgers the node no longer names.
   */
  private async switchLedger(
    base: CursorInfoModel,
    inline: Uint8Array | undefined,
    entries: Uint8Array[],
  ): Promise<void> {
    if (this.cursorLedgerId !== NO_CURSOR_LEDGER) this.unnamed.add(this.cursorLedgerId);
    this.ledger = undefined;
    if (inline !== undefined) {
      await this.keeper.write({ ...base, cursorsLedgerId: NO_CURSOR_LEDGER, inlineSnapshot: inline });
    } else {
      const writer = await createOwnedLedger(this.ctx.metadata, this.ctx.store, {
        topic: this.ctx.topic,
        path: this.ctx.path,
        component: 'cursor',
        cursorName: this.keeper.cursorName,
      });
      try {
        await writer.append(entries);
      } catch (err) {
        discardUnreferencedLedger(this.ctx.store, writer.ledgerId);
        throw err;
      }
      const { inlineSnapshot: _inline, ...withoutInline } = base;
      try {
        await this.keeper.write({ ...withoutInline, cursorsLedgerId: writer.ledgerId });
      } catch (err) {
        // A lost compare-and-set proves the node does not name the new ledger; without an answer, the next write tells.
        if (isBadVersion(err)) discardUnreferencedLedger(this.ctx.store, writer.ledgerId);
        else this.unnamed.add(writer.ledgerId);
        throw err;
      }
      this.ledger = { writer, snapshots: 1, createdAtMs: this.ctx.now() };
    }
    await this.retireUnnamed();
  }

  /**
   * Hands the cursor ledgers the node does not name (after a successful
   * write) to the managed ledger, which marks them deletable (or carries or
   * discards them when it cannot).
   */
  private async retireUnnamed(): Promise<void> {
    const named = this.cursorLedgerId;
    const retired = [...this.unnamed].filter((ledgerId) => ledgerId !== named);
    if (retired.length === 0) return;
    for (const ledgerId of retired) this.unnamed.delete(ledgerId);
    const cursorName = this.keeper.cursorName;
    const markedAtMs = this.ctx.now();
    await this.markDeletable(retired.map((ledgerId) => ({ ledgerId, component: 'cursor', cursorName, markedAtMs })));
  }

  private reportDropped(rangesDropped: number): void {
    const cursor = this.keeper.cursorName;
    this.ctx.metrics.cursorRangesNotPersisted.inc({ topic: this.ctx.topic, cursor }, rangesDropped);
    this.ctx.logger.warn(
      { topic: this.ctx.topic, cursor, rangesDropped, maxRangesToPersist: this.ctx.config.cursor.maxRangesToPersist },
      'cursor snapshot left acknowledged ranges out (maxRangesToPersist): they are redelivered after a restart',
    );
  }
}
