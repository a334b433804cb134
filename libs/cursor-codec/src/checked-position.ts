import { invalidPosition } from './errors.js';
import type { EntryRange, Position } from './position.js';

declare const checkedBrand: unique symbol;
declare const entryBrand: unique symbol;
declare const rangeBrand: unique symbol;

/**
 * A position whose ids were checked once, where it entered (a request, a
 * delta, a config): safe integers, ledgerId >= 0, entryId >= -1. Entry -1 is
 * Pulsar's "before the first entry of the ledger", legal wherever a position
 * marks a boundary rather than an entry: a mark-delete position (L, -1), a
 * seek or a cursor start. Layers below take this type and do not check again.
 */
export type CheckedPosition = Position & { readonly [checkedBrand]: true };

/**
 * A checked position that names an entry (entryId >= 0): what a consumer
 * acknowledges, acknowledges up to, or negatively acknowledges. Pulsar's
 * clients only ever ack the message id of a message they received, and no
 * message has entry id -1, so an ack at -1 is a client bug, refused at the wire.
 */
export type EntryPosition = CheckedPosition & { readonly [entryBrand]: true };

/**
 * An inclusive range of entries of one ledger, checked once where it entered
 * (an Ack's ranges): ids as an EntryPosition's, firstEntryId <= lastEntryId.
 * Whether its entries exist is known only to the cursor.
 */
export type CheckedEntryRange = Readonly<EntryRange> & { readonly [rangeBrand]: true };

/** A ledger or entry id as it arrives: a number (in process) or an int64 (protobuf-es bigint). */
type RawId = number | bigint;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function idOf(value: unknown, min: number): number | undefined {
  if (typeof value === 'bigint') return value >= BigInt(min) && value <= MAX_SAFE ? Number(value) : undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min) return value;
  return undefined;
}

function checked(p: unknown, what: string, minEntryId: number): Position {
  if (typeof p !== 'object' || p === null) throw invalidPosition(`${what} is missing`);
  const { ledgerId, entryId } = p as { ledgerId?: RawId; entryId?: RawId };
  const ledger = idOf(ledgerId, 0);
  if (ledger === undefined) {
    throw invalidPosition(`${what}.ledgerId must be an integer from 0 to 2^53-1, got ${String(ledgerId)}`);
  }
  const entry = idOf(entryId, minEntryId);
  if (entry === undefined) {
    throw invalidPosition(
      minEntryId === 0
        ? `${what}.entryId must name an entry (0 to 2^53-1), got ${String(entryId)}`
        : `${what}.entryId must be an integer from -1 to 2^53-1, got ${String(entryId)}`,
    );
  }
  return { ledgerId: ledger, entryId: entry };
}

/** Checks a position from outside (ids as numbers or int64 bigints); INVALID_ARGUMENT INVALID_POSITION otherwise. */
export function checkPosition(p: unknown, what = 'position'): CheckedPosition {
  return checked(p, what, -1) as CheckedPosition;
}

/** Checks a position from outside that must name an entry (entryId >= 0); INVALID_ARGUMENT INVALID_POSITION otherwise. */
export function checkEntryPosition(p: unknown, what = 'position'): EntryPosition {
  return checked(p, what, 0) as EntryPosition;
}

/**
 * Checks a range from outside ({ ledgerId, firstEntryId, lastEntryId }, ids as
 * numbers or int64 bigints): both ends name entries of the one ledger and the
 * first is not after the last; INVALID_ARGUMENT INVALID_POSITION otherwise.
 */
export function checkEntryRange(r: unknown, what = 'range'): CheckedEntryRange {
  if (typeof r !== 'object' || r === null) throw invalidPosition(`${what} is missing`);
  const { ledgerId, firstEntryId, lastEntryId } = r as { ledgerId?: RawId; firstEntryId?: RawId; lastEntryId?: RawId };
  const first = checked({ ledgerId, entryId: firstEntryId }, `${what} first`, 0);
  const last = checked({ ledgerId, entryId: lastEntryId }, `${what} last`, 0);
  if (first.entryId > last.entryId) {
    throw invalidPosition(`${what} runs backwards: firstEntryId ${first.entryId} is after lastEntryId ${last.entryId}`);
  }
  return { ledgerId: first.ledgerId, firstEntryId: first.entryId, lastEntryId: last.entryId } as CheckedEntryRange;
}
