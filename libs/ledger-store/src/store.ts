/**
 * The ledger store: append-only ledgers of binary entries, BookKeeper-style.
 * Entries get consecutive ids from 0. A ledger is open (one writer appends),
 * fenced (recovery took it: appends fail with ABORTED / LEDGER_FENCED) or
 * closed (sealed at its last entry). The last-add-confirmed (LAC) is the id of
 * the last entry the store acknowledged; -1 when there is none.
 */
export interface LedgerStore {
  /** Creates an open ledger; ALREADY_EXISTS / LEDGER_EXISTS if the id is taken. */
  create(ledgerId: number, options?: CreateLedgerOptions): Promise<LedgerWriter>;
  /**
   * Fences a ledger and returns its LAC: after it returns, no append from any
   * existing writer can succeed. Fencing a fenced or closed ledger returns its LAC.
   */
  fence(ledgerId: number): Promise<number>;
  /** Seals a ledger at its LAC (after fencing, by the recovering owner); returns the last entry id. Idempotent. */
  closeLedger(ledgerId: number): Promise<number>;
  /** Entries firstEntryId..lastEntryId inclusive; OUT_OF_RANGE past the LAC. */
  read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]>;
  lastAddConfirmed(ledgerId: number): Promise<number>;
  info(ledgerId: number): Promise<LedgerInfo | undefined>;
  /** Removes a ledger and every entry. Deleting a missing ledger is a no-op. */
  delete(ledgerId: number): Promise<void>;
  /** Every ledger id in ascending order, paged: pass `next` back as `after`. */
  list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }>;
  close(): Promise<void>;
}

export interface CreateLedgerOptions {
  /** Who the ledger belongs to (topic, component, cursor): checked before deletion. */
  ownerTags?: Record<string, string>;
}

export interface LedgerWriter {
  readonly ledgerId: number;
  /**
   * Appends entries atomically in call order and resolves with the id of the
   * first one, only once the store holds them. ABORTED / LEDGER_FENCED after a
   * fence, FAILED_PRECONDITION / LEDGER_CLOSED after close.
   */
  append(entries: Uint8Array[]): Promise<number>;
  /** Seals the ledger; returns the last entry id (-1 if empty). */
  close(): Promise<number>;
}

export interface LedgerEntry {
  entryId: number;
  data: Uint8Array;
}

export type LedgerState = 'open' | 'fenced' | 'closed';

export interface LedgerInfo {
  ledgerId: number;
  state: LedgerState;
  lastAddConfirmed: number;
  sizeBytes: number;
  ownerTags: Record<string, string>;
  createdAtMs: number;
}

/** Owner tag keys the system writes (PIP-186's custom metadata, ours). */
export const OwnerTag = {
  topic: 'ledgerline/topic',
  managedLedger: 'ledgerline/managed-ledger',
  component: 'ledgerline/component',
  cursor: 'ledgerline/cursor',
} as const;

export const DEFAULT_MAX_ENTRY_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_READ_ENTRIES = 10_000;
