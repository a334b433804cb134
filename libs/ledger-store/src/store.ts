/**
 * The ledger store: append-only ledgers of binary entries, BookKeeper-style.
 * Entries get consecutive ids from 0. A ledger is open (one writer appends),
 * fenced (recovery took it: appends fail with ABORTED / LEDGER_FENCED) or
 * closed (sealed at its last entry). The last-add-confirmed (LAC) is the id of
 * the last entry the store acknowledged; -1 when there is none.
 *
 * A ledger that was fenced, or closed by anyone but its writer, stays fenced
 * for good: its old writer's appends and close keep failing with
 * ABORTED / LEDGER_FENCED even after the recovering owner closed it.
 *
 * Every call on a missing ledger is NOT_FOUND / LEDGER_NOT_FOUND (except
 * `info`, `delete`). Ids must be non-negative safe integers, else
 * INVALID_ARGUMENT. A store that cannot be reached fails fast with
 * UNAVAILABLE / STORE_UNAVAILABLE. Such a failure of `append` is ambiguous:
 * the entries may or may not have been stored, so the writer must not retry
 * the same entries on the same ledger; it fences or closes the ledger and
 * reads its LAC to learn the outcome (a managed ledger rolls to a new ledger).
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
  /**
   * Entries firstEntryId..lastEntryId inclusive, in order. OUT_OF_RANGE /
   * ENTRY_NOT_CONFIRMED when lastEntryId is past the LAC; INVALID_ARGUMENT /
   * READ_RANGE_TOO_LARGE above the read limit.
   */
  read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]>;
  lastAddConfirmed(ledgerId: number): Promise<number>;
  info(ledgerId: number): Promise<LedgerInfo | undefined>;
  /** Removes a ledger and every entry. Deleting a missing ledger is a no-op. */
  delete(ledgerId: number): Promise<void>;
  /**
   * Every ledger id in ascending order, paged: pass `next` back as `after`;
   * `next` is set only when more ids follow. On a Redis Cluster the index
   * lives apart from the ledgers, so a page may briefly name a ledger whose
   * create or delete is still in flight (or was interrupted): `info` returns
   * undefined for it and `delete` clears it. A ledger that exists is always listed.
   */
  list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }>;
  close(): Promise<void>;
  /**
   * `info` for many ledgers in one round trip where the backend can (a Redis
   * pipeline, one SQLite read). Result i answers for ledgerIds[i] exactly as
   * `info` would, so one corrupt ledger fails only its own result; the call
   * itself rejects only when none could be answered (bad input, a closed or
   * unreachable store). At most MAX_BATCH_LEDGERS ids, else INVALID_ARGUMENT /
   * BATCH_TOO_LARGE. Optional: wrappers and test stores may leave it out, and
   * callers then fall back to `info`.
   */
  infoMany?(ledgerIds: readonly number[]): Promise<PromiseSettledResult<LedgerInfo | undefined>[]>;
  /**
   * `delete` for many ledgers in one round trip where the backend can, with
   * the same ordering guarantees as `delete`. A fulfilled result i means
   * ledgerIds[i] is gone; a rejected one, or a rejected call, says nothing
   * about which were deleted (deleting is idempotent: retry them). Same bound
   * and fallback as `infoMany`.
   */
  deleteMany?(ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]>;
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
  /**
   * Seals the ledger; returns the last entry id (-1 if empty). Idempotent for
   * the writer; ABORTED / LEDGER_FENCED once the ledger was fenced.
   */
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
/**
 * Entries one read returns at most, unless the store is configured otherwise.
 * Defined by offset-index, whose lookups read one such page at a time, so a
 * lookup's page and the store's limit are the same number.
 */
export { DEFAULT_MAX_READ_ENTRIES } from '@ledgerline/offset-index';
/** Entries in one append call; a larger batch is RESOURCE_EXHAUSTED / APPEND_TOO_LARGE. */
export const DEFAULT_MAX_APPEND_ENTRIES = 10_000;
/** Bytes in one append call (sum of its entries); a larger batch is RESOURCE_EXHAUSTED / APPEND_TOO_LARGE. */
export const DEFAULT_MAX_APPEND_BYTES = 64 * 1024 * 1024;
/** Ledger ids per `list()` page when no limit is given, and the largest limit accepted. */
export const DEFAULT_LIST_PAGE = 1_000;
export const MAX_LIST_PAGE = 10_000;
/** Ledger ids one `infoMany` / `deleteMany` call takes at most, else INVALID_ARGUMENT / BATCH_TOO_LARGE. */
export const MAX_BATCH_LEDGERS = 1_000;
/** Owner tags as stored (JSON, UTF-8): at most this many bytes, else RESOURCE_EXHAUSTED / OWNER_TAGS_TOO_LARGE. */
export const MAX_OWNER_TAGS_BYTES = 4 * 1024;

/**
 * The bounds every backend enforces before touching storage. A call over a
 * size bound is RESOURCE_EXHAUSTED (the request cannot fit); a read range over
 * maxReadEntries is INVALID_ARGUMENT / READ_RANGE_TOO_LARGE (split it).
 */
export interface LedgerStoreLimits {
  /** Largest single entry, in bytes. */
  maxEntryBytes: number;
  /** Most entries in one append call. */
  maxAppendEntries: number;
  /** Most bytes in one append call. */
  maxAppendBytes: number;
  /** Most entries one read call may ask for. */
  maxReadEntries: number;
}

/** Options every backend accepts. */
export interface LedgerStoreOptions {
  /** Any bound left out takes its DEFAULT_ value. */
  limits?: Partial<LedgerStoreLimits>;
  /**
   * Called after every acknowledged append with the ledger's new LAC: the hook
   * the caller wires to the bus ("LAC advanced" hints). Errors it throws are
   * swallowed; it must not block.
   */
  onLacAdvanced?: (ledgerId: number, lastAddConfirmed: number) => void;
}
