import { invalidArgument, LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason } from './errors.js';
import {
  DEFAULT_LIST_PAGE,
  DEFAULT_MAX_APPEND_BYTES,
  DEFAULT_MAX_APPEND_ENTRIES,
  DEFAULT_MAX_ENTRY_BYTES,
  DEFAULT_MAX_READ_ENTRIES,
  MAX_BATCH_LEDGERS,
  MAX_LIST_PAGE,
  MAX_OWNER_TAGS_BYTES,
  type LedgerStoreLimits,
} from './store.js';

/*
 * Checks shared by every backend, run before anything touches storage, so a
 * bad call fails the same way on SQLite and on Redis.
 */

export function validateLedgerId(ledgerId: unknown): number {
  if (!isId(ledgerId)) {
    throw invalidArgument(
      LedgerStoreReason.BAD_LEDGER_ID,
      `ledger id must be a non-negative safe integer, got ${describe(ledgerId)}`,
    );
  }
  return ledgerId;
}

export function validateEntryId(entryId: unknown, name: string): number {
  if (!isId(entryId)) {
    throw invalidArgument(
      LedgerStoreReason.BAD_ENTRY_ID,
      `${name} must be a non-negative safe integer, got ${describe(entryId)}`,
    );
  }
  return entryId;
}

/** Checks a read range; returns how many entries it covers. */
export function validateReadRange(firstEntryId: unknown, lastEntryId: unknown, limits: LedgerStoreLimits): number {
  const first = validateEntryId(firstEntryId, 'firstEntryId');
  const last = validateEntryId(lastEntryId, 'lastEntryId');
  if (first > last) {
    throw invalidArgument(LedgerStoreReason.BAD_ENTRY_RANGE, `firstEntryId ${first} is after lastEntryId ${last}`);
  }
  const count = last - first + 1;
  if (count > limits.maxReadEntries) {
    throw invalidArgument(
      LedgerStoreReason.READ_RANGE_TOO_LARGE,
      `a read may cover at most ${limits.maxReadEntries} entries (maxReadEntries), this one covers ${count}: split it`,
    );
  }
  return count;
}

/** Checks an append batch against the limits; returns its total size in bytes. */
export function validateAppend(entries: unknown, limits: LedgerStoreLimits): number {
  if (!Array.isArray(entries)) {
    throw invalidArgument(
      LedgerStoreReason.BAD_ENTRY,
      `append takes an array of Uint8Array entries, got ${describe(entries)}`,
    );
  }
  if (entries.length === 0) throw invalidArgument(LedgerStoreReason.EMPTY_APPEND, 'append needs at least one entry');
  if (entries.length > limits.maxAppendEntries) {
    throw tooLarge(
      LedgerStoreReason.APPEND_TOO_LARGE,
      `an append may carry at most ${limits.maxAppendEntries} entries (maxAppendEntries), got ${entries.length}`,
    );
  }
  let totalBytes = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry: unknown = entries[i];
    if (!(entry instanceof Uint8Array)) {
      throw invalidArgument(
        LedgerStoreReason.BAD_ENTRY,
        `entry ${i} of the append is not a Uint8Array: ${describe(entry)}`,
      );
    }
    if (entry.byteLength > limits.maxEntryBytes) {
      throw tooLarge(
        LedgerStoreReason.ENTRY_TOO_LARGE,
        `entry ${i} has ${entry.byteLength} bytes, above maxEntryBytes ${limits.maxEntryBytes}`,
      );
    }
    totalBytes += entry.byteLength;
  }
  if (totalBytes > limits.maxAppendBytes) {
    throw tooLarge(
      LedgerStoreReason.APPEND_TOO_LARGE,
      `an append may carry at most ${limits.maxAppendBytes} bytes, got ${totalBytes}`,
    );
  }
  return totalBytes;
}

/** Checks owner tags and returns their stored form (JSON with sorted keys). */
export function encodeOwnerTags(ownerTags: unknown): string {
  if (ownerTags === undefined) return '{}';
  if (typeof ownerTags !== 'object' || ownerTags === null || Array.isArray(ownerTags)) {
    throw invalidArgument(
      LedgerStoreReason.BAD_OWNER_TAGS,
      `ownerTags must be an object of strings, got ${describe(ownerTags)}`,
    );
  }
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(ownerTags).sort()) {
    const value: unknown = (ownerTags as Record<string, unknown>)[key];
    if (typeof value !== 'string') {
      throw invalidArgument(
        LedgerStoreReason.BAD_OWNER_TAGS,
        `owner tag '${key}' must be a string, got ${describe(value)}`,
      );
    }
    sorted[key] = value;
  }
  const json = JSON.stringify(sorted);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_OWNER_TAGS_BYTES) {
    throw tooLarge(
      LedgerStoreReason.OWNER_TAGS_TOO_LARGE,
      `owner tags take ${bytes} bytes, above ${MAX_OWNER_TAGS_BYTES}`,
    );
  }
  return json;
}

/** Parses stored owner tags; anything but an object of strings is corrupt data. */
export function decodeOwnerTags(json: string): Record<string, string> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  for (const value of Object.values(parsed)) if (typeof value !== 'string') return undefined;
  return parsed as Record<string, string>;
}

/** Checks the ids of an infoMany / deleteMany call: an array of at most MAX_BATCH_LEDGERS valid ledger ids. */
export function validateLedgerBatch(ledgerIds: unknown): readonly number[] {
  if (!Array.isArray(ledgerIds)) {
    throw invalidArgument(
      LedgerStoreReason.BAD_LEDGER_ID,
      `a batch takes an array of ledger ids, got ${describe(ledgerIds)}`,
    );
  }
  if (ledgerIds.length > MAX_BATCH_LEDGERS) {
    throw invalidArgument(
      LedgerStoreReason.BATCH_TOO_LARGE,
      `a batch may name at most ${MAX_BATCH_LEDGERS} ledgers (MAX_BATCH_LEDGERS), this one names ${ledgerIds.length}: split it`,
    );
  }
  for (const ledgerId of ledgerIds) validateLedgerId(ledgerId);
  return ledgerIds as readonly number[];
}

/** Resolves `list()` options: `after` -1 means from the start. */
export function validateListOptions(options: unknown): { after: number; limit: number } {
  const { after, limit } = (options ?? {}) as { after?: unknown; limit?: unknown };
  const resolvedAfter = after === undefined ? -1 : validateLedgerId(after);
  if (limit === undefined) return { after: resolvedAfter, limit: DEFAULT_LIST_PAGE };
  if (!Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIST_PAGE) {
    throw invalidArgument(
      LedgerStoreReason.BAD_PAGE_LIMIT,
      `list limit must be an integer from 1 to ${MAX_LIST_PAGE}, got ${describe(limit)}`,
    );
  }
  return { after: resolvedAfter, limit: limit as number };
}

/** Fills in default limits and checks the given ones are positive integers. */
export function resolveLimits(limits: Partial<LedgerStoreLimits> = {}): LedgerStoreLimits {
  const resolved: LedgerStoreLimits = {
    maxEntryBytes: limits.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES,
    maxAppendEntries: limits.maxAppendEntries ?? DEFAULT_MAX_APPEND_ENTRIES,
    maxAppendBytes: limits.maxAppendBytes ?? DEFAULT_MAX_APPEND_BYTES,
    maxReadEntries: limits.maxReadEntries ?? DEFAULT_MAX_READ_ENTRIES,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `ledger store limit ${name} must be a positive integer, got ${describe(value)}`,
      );
    }
  }
  return resolved;
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function tooLarge(reason: string, message: string): LedgerlineError {
  return new LedgerlineError('RESOURCE_EXHAUSTED', reason, message);
}

function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'bigint') return `${value}n`;
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}
