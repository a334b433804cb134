import { createHash } from 'node:crypto';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerInfoReason } from './reasons.js';

/**
 * The index of managed ledgers with pending deletions (PIP-129 phase 2's work
 * list). A managed ledger whose ManagedLedgerInfo carries deletable markers
 * has an entry here, written BEFORE the compare-and-set that adds a marker: a
 * crash between the two leaves a stale entry (the garbage collector drops it),
 * never a marker the collector cannot find without reading every topic.
 *
 *   /pending-deletions/<shard>/<entry>    entry = hex digest of the managed-ledger path
 *
 * Entries are spread over PENDING_DELETION_SHARDS shards so that several
 * collectors split the work by shard. The entry name is a fixed-length digest
 * (a managed-ledger path can be close to the metadata store's path limit);
 * the path itself is in the value. Changing the shard count moves entries, so
 * it is part of the stored layout: the collector reads every shard directory.
 */
export const PENDING_DELETIONS_DIR = '/pending-deletions';

/** Shards of the index; collectors split them between themselves. */
export const PENDING_DELETION_SHARDS = 16;

/** Hex characters of the digest naming an entry (128 bits: collisions are not a practical concern). */
const ENTRY_NAME_HEX_CHARS = 32;

/** First byte of every entry value, then the format version, then UTF-8 JSON. */
const ENTRY_MAGIC = 0x70;
const ENTRY_VERSION = 1;

export interface PendingDeletionEntry {
  managedLedgerPath: string;
  /** When the writer (re)indexed it, by its clock: for operators, never for decisions. */
  indexedAtMs: number;
}

function digest(managedLedgerPath: string): Buffer {
  return createHash('sha256').update(managedLedgerPath, 'utf8').digest();
}

/** The shard a managed ledger's entry lives in, 0 to PENDING_DELETION_SHARDS - 1. */
export function pendingDeletionShard(managedLedgerPath: string): number {
  return digest(managedLedgerPath).readUInt32BE(0) % PENDING_DELETION_SHARDS;
}

export function pendingDeletionShardDir(shard: number): string {
  if (!Number.isInteger(shard) || shard < 0 || shard >= PENDING_DELETION_SHARDS) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      LedgerInfoReason.INVALID_SHARD,
      `pending-deletion shards are 0 to ${PENDING_DELETION_SHARDS - 1}, got ${shard}`,
    );
  }
  return `${PENDING_DELETIONS_DIR}/${shard}`;
}

/** The index entry of a managed ledger. */
export function pendingDeletionEntryPath(managedLedgerPath: string): string {
  const name = digest(managedLedgerPath).toString('hex').slice(0, ENTRY_NAME_HEX_CHARS);
  return `${pendingDeletionShardDir(pendingDeletionShard(managedLedgerPath))}/${name}`;
}

export function encodePendingDeletionEntry(entry: PendingDeletionEntry): Uint8Array {
  const json = Buffer.from(JSON.stringify({ path: entry.managedLedgerPath, indexedAtMs: entry.indexedAtMs }), 'utf8');
  const bytes = new Uint8Array(2 + json.byteLength);
  bytes[0] = ENTRY_MAGIC;
  bytes[1] = ENTRY_VERSION;
  bytes.set(json, 2);
  return bytes;
}

/** Decodes an entry; a value this code never wrote is DATA_LOSS / CORRUPT_PENDING_DELETION_ENTRY. */
export function decodePendingDeletionEntry(bytes: Uint8Array): PendingDeletionEntry {
  const corrupt = (why: string) =>
    new LedgerlineError(
      'DATA_LOSS',
      LedgerInfoReason.CORRUPT_PENDING_DELETION_ENTRY,
      `a pending-deletion index entry ${why}`,
    );
  if (bytes.byteLength < 2 || bytes[0] !== ENTRY_MAGIC) throw corrupt('has no magic byte');
  if (bytes[1] !== ENTRY_VERSION) throw corrupt(`has unknown version ${bytes[1]}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.subarray(2)).toString('utf8'));
  } catch {
    throw corrupt('is not JSON');
  }
  const record = parsed as { path?: unknown; indexedAtMs?: unknown };
  if (typeof record.path !== 'string' || !record.path.startsWith('/')) throw corrupt('names no managed-ledger path');
  const indexedAtMs = typeof record.indexedAtMs === 'number' ? record.indexedAtMs : 0;
  return { managedLedgerPath: record.path, indexedAtMs };
}
