import { type Position } from '@ledgerline/cursor-codec';
import { decodeEntry } from '@ledgerline/offset-index';
import type { LedgerEntry } from '@ledgerline/ledger-store';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { LedgerContext } from '../context.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { ManagedLedgerReason } from '../reasons.js';
import { firstEntryAtOrAfter, ledgerViews, type LedgerView } from './ledger-views.js';

/** Entries fetched per ledger-store call at most. */
const STORE_READ_PAGE = 1_000;

export interface ReadOptions {
  maxEntries?: number;
  maxBytes?: number;
}

export interface ReadLimits {
  maxEntries: number;
  maxBytes: number;
}

/** Read limits given as `{maxEntries, maxBytes}` or as a count and a byte bound, checked against the maxima. */
export function readLimits(
  ctx: LedgerContext,
  limitsOrMaxEntries: ReadOptions | number,
  maxBytes: number | undefined,
): ReadLimits {
  const options =
    typeof limitsOrMaxEntries === 'number' ? { maxEntries: limitsOrMaxEntries, maxBytes } : limitsOrMaxEntries;
  return checkReadLimits(ctx, options.maxEntries, options.maxBytes);
}

/** Checks read limits from outside against the configured maxima. */
export function checkReadLimits(ctx: LedgerContext, maxEntries: unknown, maxBytes: unknown): ReadLimits {
  const { maxReadEntries, maxReadBytes } = ctx.config;
  const entries = maxEntries ?? maxReadEntries;
  const bytes = maxBytes ?? maxReadBytes;
  if (!Number.isSafeInteger(entries) || (entries as number) < 1 || (entries as number) > maxReadEntries) {
    throw invalidArgument(ManagedLedgerReason.INVALID_READ_LIMITS, `maxEntries must be from 1 to ${maxReadEntries}`);
  }
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 1 || (bytes as number) > maxReadBytes) {
    throw invalidArgument(ManagedLedgerReason.INVALID_READ_LIMITS, `maxBytes must be from 1 to ${maxReadBytes}`);
  }
  return { maxEntries: entries as number, maxBytes: bytes as number };
}

/**
 * Reads entries from `from` on, across ledgers, up to the limits (always at
 * least one entry when one exists). Entries in the cache are served from
 * memory; the rest come from the store one range read per ledger and page.
 * Returns [] when nothing at or after `from` is stored yet.
 */
export async function readEntries(
  ctx: LedgerContext,
  from: Position,
  limits: ReadLimits,
): Promise<ManagedLedgerEntry[]> {
  const views = ledgerViews(ctx.keeper.info.ledgers, ctx.current);
  const out: ManagedLedgerEntry[] = [];
  let bytes = 0;
  let next = firstEntryAtOrAfter(views, from);
  while (next !== undefined && out.length < limits.maxEntries && bytes < limits.maxBytes) {
    const view = views.find((v) => v.ledgerId === next!.ledgerId) as LedgerView;
    const last = Math.min(view.entries - 1, next.entryId + (limits.maxEntries - out.length) - 1);
    const entries = await readLedgerRange(ctx, view, next.entryId, last, limits.maxBytes - bytes);
    for (const entry of entries) {
      if (out.length > 0 && bytes + entry.payload.byteLength > limits.maxBytes) return out;
      out.push(entry);
      bytes += entry.payload.byteLength;
    }
    next = firstEntryAtOrAfter(views, { ledgerId: view.ledgerId, entryId: last + 1 });
  }
  return out;
}

/** Entries first..last of one ledger, from the cache where it has them. Stops early once `maxBytes` are gathered. */
async function readLedgerRange(
  ctx: LedgerContext,
  view: LedgerView,
  first: number,
  last: number,
  maxBytes: number,
): Promise<ManagedLedgerEntry[]> {
  const out: ManagedLedgerEntry[] = [];
  let bytes = 0;
  let previousLastOffset: number | undefined = first === 0 ? view.firstOffset - 1 : undefined;
  for (let entryId = first; entryId <= last && bytes < maxBytes;) {
    const cached = ctx.cache.get({ ledgerId: view.ledgerId, entryId });
    if (cached !== undefined) {
      out.push(cached);
      bytes += cached.payload.byteLength;
      previousLastOffset = cached.lastOffset;
      entryId++;
      continue;
    }
    const pageLast = Math.min(last, entryId + entriesWithin(view, maxBytes - bytes) - 1);
    const known = previousLastOffset ?? knownLastOffset(ctx, view, entryId - 1);
    // The first offset of an entry is the previous entry's index + 1: read that one too when it is unknown.
    const stored = await ctx.store.read(view.ledgerId, known === undefined ? entryId - 1 : entryId, pageLast);
    let previous = known;
    for (const raw of stored) {
      const entry = toManagedEntry(view.ledgerId, raw, previous);
      previous = entry.lastOffset;
      if (raw.entryId < entryId) continue;
      ctx.cache.put(entry);
      out.push(entry);
      bytes += entry.payload.byteLength;
    }
    previousLastOffset = previous;
    entryId = pageLast + 1;
  }
  return out;
}

/**
 * How many entries one store read asks for to gather `bytes`: the ledger's
 * mean entry size says, plus one for an entry larger than the mean. A read of
 * old entries used to ask for a whole page whatever the byte limit, so a
 * Kafka fetch of 1 MiB over entries of 500 KB pulled up to 1,000 of them
 * (500 MB) from the store to answer two; when entries run larger than the
 * mean, the loop reads again, which costs a round trip, not a page of waste.
 */
function entriesWithin(view: LedgerView, bytes: number): number {
  if (view.entries === 0 || view.sizeBytes <= 0) return STORE_READ_PAGE;
  const meanEntryBytes = Math.max(1, view.sizeBytes / view.entries);
  return Math.max(1, Math.min(STORE_READ_PAGE, Math.ceil(bytes / meanEntryBytes) + 1));
}

function knownLastOffset(ctx: LedgerContext, view: LedgerView, entryId: number): number | undefined {
  if (entryId < 0) return view.firstOffset - 1;
  const cached = ctx.cache.get({ ledgerId: view.ledgerId, entryId });
  if (cached !== undefined) return cached.lastOffset;
  const table = ctx.current?.ledgerId === view.ledgerId ? ctx.current.offsets : ctx.offsetTables.peek(view.ledgerId);
  return table !== undefined && entryId < table.entryCount ? table.lastOffsetOf(entryId) : undefined;
}

/** Unframes a stored entry; `previousLastOffset` undefined means "unknown", which only the dropped lead entry may be. */
export function toManagedEntry(
  ledgerId: number,
  raw: LedgerEntry,
  previousLastOffset: number | undefined,
): ManagedLedgerEntry {
  const { metadata, payload } = decodeEntry(raw.data);
  if (metadata?.index === undefined || metadata.brokerTimestamp === undefined) {
    throw new LedgerlineError(
      'DATA_LOSS',
      ManagedLedgerReason.ENTRY_METADATA_MISSING,
      `entry ${raw.entryId} of ledger ${ledgerId} carries no broker entry metadata`,
    );
  }
  const firstOffset = previousLastOffset === undefined ? metadata.index : previousLastOffset + 1;
  return {
    position: { ledgerId, entryId: raw.entryId },
    payload,
    firstOffset,
    lastOffset: metadata.index,
    numMessages: metadata.index - firstOffset + 1,
    brokerTimestampMs: metadata.brokerTimestamp,
  };
}
