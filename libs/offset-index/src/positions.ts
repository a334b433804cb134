import type { EntryRange } from '@ledgerline/cursor-codec';
/**
 * Where a lookup lands. `offset` is the offset of the message at the position;
 * for a `pastEnd` result it is the next offset the topic will assign.
 */
export interface MessagePosition {
  ledgerId: number;
  entryId: number;
  /** The message's place inside its entry's batch (0 for the first message). */
  batchIndex: number;
  offset: number;
  /** The requested offset or time lies before the first retained message; the position is the earliest. */
  beforeEarliest: boolean;
  /** The requested offset or time lies after the last message; the position is the end (the next entry to be written). */
  pastEnd: boolean;
}

/**
 * The entries one range read must fetch: ledger `ledgerId`, entries
 * `firstEntryId..lastEntryId` inclusive. `firstOffset` is the offset of the
 * first message of `firstEntryId`, which the entries alone cannot tell
 * (broker entry metadata carries only the last offset of an entry).
 */
export interface EntryReadRange extends EntryRange {
  firstOffset: number;
}

/** A lookup answered from the index alone, or the one range read that will answer it. */
export type Location = { kind: 'resolved'; position: MessagePosition } | { kind: 'read'; range: EntryReadRange };

/** An entry as the ledger store returns it. */
export interface StoredEntry {
  entryId: number;
  data: Uint8Array;
}

/**
 * What a lookup needs from the ledger store: one call that returns entries
 * `firstEntryId..lastEntryId` of a ledger, inclusive and in order.
 */
export interface EntryReader {
  readRange(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<readonly StoredEntry[]>;
}
