/**
 * A position in a managed ledger. Entry id -1 means "before the first entry
 * of the ledger", as in Pulsar (a mark-delete position may be (L, -1)).
 */
export interface Position {
  readonly ledgerId: number;
  readonly entryId: number;
}

/** An inclusive range of entries of one ledger: `firstEntryId..lastEntryId`. */
export interface EntryRange {
  ledgerId: number;
  firstEntryId: number;
  lastEntryId: number;
}

/** The key of a position in maps such as CursorState.batchAcks: "ledgerId:entryId". */
export function positionKey(ledgerId: number, entryId: number): string {
  return `${ledgerId}:${entryId}`;
}

/** Parses a positionKey; returns undefined for anything else. */
export function parsePositionKey(key: string): Position | undefined {
  const match = /^(0|[1-9]\d{0,15}):(0|[1-9]\d{0,15})$/.exec(key);
  if (match === null) return undefined;
  const ledgerId = Number(match[1]);
  const entryId = Number(match[2]);
  if (!Number.isSafeInteger(ledgerId) || !Number.isSafeInteger(entryId)) return undefined;
  return { ledgerId, entryId };
}

/** Orders positions by ledger, then entry. */
export function comparePositions(a: Position, b: Position): number {
  return a.ledgerId !== b.ledgerId ? a.ledgerId - b.ledgerId : a.entryId - b.entryId;
}
