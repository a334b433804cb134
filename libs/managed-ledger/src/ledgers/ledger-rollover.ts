import type { Position } from '@ledgerline/cursor-codec';
import { managedLedgerSubject, encodeManagedLedgerNotification } from '@ledgerline/bus';
import type { ManagedLedgerConfig } from '../config.js';
import type { LedgerContext } from '../context.js';
import { discardUnrecordedLedgers } from './deletable-ledgers.js';
import { isLedgerFenced, ledgerFencedError } from '../errors.js';
import { createOwnedLedger, discardUnreferencedLedger } from './ledger-factory.js';
import {
  INDEX_PROPERTY,
  withDeletable,
  type LedgerSummary,
  type ManagedLedgerInfoModel,
} from '@ledgerline/ledger-info';
import { OpenLedger } from './open-ledger.js';

/**
 * Pulsar's rule: a ledger rolls over once it holds maxEntriesPerLedger
 * entries or maxSizePerLedgerBytes bytes, but not before it is minLedgerAgeMs
 * old; and it rolls over at maxLedgerAgeMs whatever it holds, unless empty.
 */
export function shouldRollover(ledger: OpenLedger, config: ManagedLedgerConfig, nowMs: number): boolean {
  if (ledger.entries === 0) return false;
  const ageMs = nowMs - ledger.createdAtMs;
  if (ageMs >= config.maxLedgerAgeMs) return true;
  if (ageMs < config.minLedgerAgeMs) return false;
  return ledger.entries >= config.maxEntriesPerLedger || ledger.sizeBytes >= config.maxSizePerLedgerBytes;
}

/**
 * Seals the current ledger (if any) and opens the next, recording both in
 * one compare-and-set: the closed ledger's counts, offsets and sparse index,
 * the new ledger, and the last offset in the "index" property. Nothing is
 * written to the new ledger before that compare-and-set succeeds, so every
 * acknowledged entry lives in a ledger the metadata names.
 */
export async function rollover(ctx: LedgerContext): Promise<void> {
  const previous = ctx.current;
  if (previous !== undefined && !previous.sealed) await sealOpenLedger(ctx, previous);
  const writer = await createOwnedLedger(ctx.metadata, ctx.store, {
    topic: ctx.topic,
    path: ctx.path,
    component: 'managed-ledger',
  });
  const next = new OpenLedger(writer, ctx.assigner.committedEnd + 1, ctx.now(), indexSpacing(ctx.config));
  const closed = previous?.closedSummary(ctx.now(), ctx.config.maxStoredEntryCountsBytes);
  try {
    await ctx.keeper.update((info) =>
      applyLedgerSwitch(info, closed, next.openSummary(), ctx.assigner.committedEnd, ctx.now(), ctx.unrecordedLedgers),
    );
  } catch (err) {
    // A lost compare-and-set proves nobody names the ledger; a write without an answer is settled by the next switch.
    if (ctx.keeper.isFenced) discardUnreferencedLedger(ctx.store, writer.ledgerId);
    else ctx.unrecordedLedgers.add(writer.ledgerId);
    throw err;
  }
  ctx.unrecordedLedgers.clear();
  if (previous !== undefined) ctx.offsetTables.remember(previous.ledgerId, previous.offsets);
  ctx.current = next;
  ctx.metrics.rollovers.inc({ topic: ctx.topic });
  publishRolled(ctx, next.ledgerId);
}

/** Seals the current ledger and records it closed, without opening another (close, terminate). */
export async function sealAndRecord(ctx: LedgerContext, extra?: (info: ManagedLedgerInfoModel) => void): Promise<void> {
  const previous = ctx.current;
  if (previous !== undefined && !previous.sealed) await sealOpenLedger(ctx, previous);
  const closed = previous?.closedSummary(ctx.now(), ctx.config.maxStoredEntryCountsBytes);
  await ctx.keeper.update((info) => {
    applyLedgerSwitch(info, closed, undefined, ctx.assigner.committedEnd, ctx.now(), ctx.unrecordedLedgers);
    extra?.(info);
  });
  ctx.unrecordedLedgers.clear();
  if (previous !== undefined) ctx.offsetTables.remember(previous.ledgerId, previous.offsets);
  ctx.current = undefined;
}

/** Seals the current ledger and records the managed ledger TERMINATED at `last`, its last entry. */
export async function sealAndRecordTerminated(ctx: LedgerContext, last: Position | undefined): Promise<void> {
  await sealAndRecord(ctx, (info) => {
    info.state = 'terminated';
    if (last !== undefined) info.terminatedPosition = last;
  });
}

/**
 * Seals and records the current ledger as the owner lets go (close). When
 * that fails, the next owner recovers what the node names; the ledgers it
 * does not name would be left behind, so they go now.
 */
export async function sealAndRecordOnClose(ctx: LedgerContext): Promise<void> {
  await sealAndRecord(ctx).catch(async (err: unknown) => {
    ctx.logger.warn(
      { managedLedger: ctx.name, error: String(err) },
      'closing the current ledger failed; the next owner recovers it',
    );
    await discardUnrecordedLedgers(ctx);
  });
}

/** Closes our ledger in the store; a ledger fenced under us means another owner. */
async function sealOpenLedger(ctx: LedgerContext, ledger: OpenLedger): Promise<void> {
  try {
    const lastEntryId = await ledger.writer.close();
    if (lastEntryId !== ledger.lastEntryId) {
      throw new Error(
        `ledger ${ledger.ledgerId} closed at entry ${lastEntryId}, but ${ledger.lastEntryId} was confirmed`,
      );
    }
  } catch (err) {
    if (isLedgerFenced(err)) throw ledgerFencedError(ctx.name, err);
    // The close may or may not have happened: treat it as a failed write, which fences and checks.
    ledger.writeFailed = true;
    throw err;
  }
  ledger.sealed = true;
}

/**
 * The ledger list after a switch: the closed ledger's final summary (or its
 * removal when empty, marked deletable), any other open ledger we abandoned
 * before it was used (removed and marked), then the new ledger. `unrecorded`
 * names ledgers we created but may never have recorded: those the list does
 * not hold are marked deletable too, so none is left behind unnamed.
 */
export function applyLedgerSwitch(
  info: ManagedLedgerInfoModel,
  closed: LedgerSummary | undefined,
  opened: LedgerSummary | undefined,
  lastOffset: number,
  nowMs: number,
  unrecorded: Iterable<number> = [],
): void {
  const listed = new Set(info.ledgers.map((l) => l.ledgerId));
  const dropped: number[] = [...unrecorded].filter((ledgerId) => !listed.has(ledgerId));
  const ledgers: LedgerSummary[] = [];
  for (const ledger of info.ledgers) {
    if (closed !== undefined && ledger.ledgerId === closed.ledgerId) {
      if (closed.entries > 0) ledgers.push(closed);
      else dropped.push(ledger.ledgerId);
    } else if (ledger.closedAtMs === undefined && ledger.entries === 0 && ledger.ledgerId !== opened?.ledgerId) {
      dropped.push(ledger.ledgerId);
    } else {
      ledgers.push(ledger);
    }
  }
  if (opened !== undefined) ledgers.push(opened);
  info.ledgers = ledgers;
  info.deletableLedgers = withDeletable(
    info,
    dropped.map((ledgerId) => ({ ledgerId, component: 'managed-ledger' as const, markedAtMs: nowMs })),
  );
  info.properties.set(INDEX_PROPERTY, String(lastOffset));
}

export function indexSpacing(config: ManagedLedgerConfig) {
  return { entriesPerPoint: config.offsetIndexIntervalEntries, bytesPerPoint: config.offsetIndexIntervalBytes };
}

function publishRolled(ctx: LedgerContext, ledgerId: number): void {
  publishManagedLedgerChange(ctx, 'rolled', ledgerId);
}

/** A hint for read-only views of this managed ledger: re-read ManagedLedgerInfo (a roll, a trim). */
export function publishManagedLedgerChange(ctx: LedgerContext, kind: 'rolled' | 'info-changed', ledgerId?: number) {
  if (ctx.bus === undefined) return;
  const payload = encodeManagedLedgerNotification({
    name: ctx.name,
    kind,
    version: ctx.keeper.version,
    ...(ledgerId === undefined ? {} : { ledgerId }),
  });
  void ctx.bus.publish(managedLedgerSubject(ctx.name), payload).catch(() => undefined);
}
