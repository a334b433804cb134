import { fromBinary } from '@bufbuild/protobuf';
import { infoFromProto } from '@ledgerline/ledger-info';
import { ManagedCursorInfoSchema, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { invalidArgument } from '@ledgerline/errors';
import { LEASES_DIR, OWNERS_DIR, SESSIONS_DIR } from '../records/layout.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * What the MetadataStoreService lets other services change. It is the raw
 * store, but two kinds of write would leave records the admin API can no
 * longer read (it would answer every later call on them with INTERNAL):
 *
 *   - the service's own records (tenants, namespaces, counters, markers,
 *     owners, sessions, leases) may be read but only changed through
 *     AdminService and LookupService: INVALID_ARGUMENT / RESERVED_PATH;
 *   - a managed-ledger node must hold a ManagedLedgerInfo and a cursor node a
 *     ManagedCursorInfo that decode: INVALID_ARGUMENT / MALFORMED_VALUE.
 */
const SERVICE_OWNED_ROOTS = ['/admin', OWNERS_DIR, SESSIONS_DIR, LEASES_DIR];

/** `/managed-ledgers/<tenant>/<ns>/<domain>[/$<bucket>]/<topic>[/<cursor>]`: which stored format a path holds. */
type ManagedLedgerNodeKind = 'managed-ledger' | 'cursor' | undefined;

export function managedLedgerNodeKind(path: string): ManagedLedgerNodeKind {
  const segments = path.split('/');
  if (segments[1] !== 'managed-ledgers' || segments.length < 6) return undefined;
  // Encoded topic names never start with `$` (it is %-encoded), so a `$` segment is a bucket directory.
  const below = segments[5]!.startsWith('$') ? segments.slice(6) : segments.slice(5);
  if (below.length === 1) return 'managed-ledger';
  if (below.length === 2) return 'cursor';
  return undefined;
}

/** Refuses writes and deletes of the service's own records through the store API. */
export function refuseServiceOwnedPath(path: string): void {
  if (SERVICE_OWNED_ROOTS.some((root) => path === root || path.startsWith(`${root}/`))) {
    throw invalidArgument(
      MetadataServiceReason.RESERVED_PATH,
      `${path.slice(0, 200)} holds the metadata service's own records: change them through AdminService or LookupService`,
      { path: path.slice(0, 200) },
    );
  }
}

function malformed(path: string, what: string, cause: unknown): never {
  const why = cause instanceof Error ? cause.message : String(cause);
  throw invalidArgument(
    MetadataServiceReason.MALFORMED_VALUE,
    `the value for ${path.slice(0, 200)} is not a valid ${what}: ${why}`,
    {
      path: path.slice(0, 200),
    },
  );
}

/** Checks a store-API write: the path is not the service's own, and a managed-ledger or cursor node decodes. */
export function checkStoreWrite(path: string, value: Uint8Array): void {
  refuseServiceOwnedPath(path);
  const kind = managedLedgerNodeKind(path);
  if (kind === 'managed-ledger') {
    try {
      infoFromProto(fromBinary(ManagedLedgerInfoSchema, value));
    } catch (error) {
      malformed(path, 'ManagedLedgerInfo', error);
    }
  } else if (kind === 'cursor') {
    let cursorsLedgerId: bigint;
    try {
      cursorsLedgerId = fromBinary(ManagedCursorInfoSchema, value).cursorsLedgerId;
    } catch (error) {
      malformed(path, 'ManagedCursorInfo', error);
    }
    if (cursorsLedgerId < -1n || cursorsLedgerId > BigInt(Number.MAX_SAFE_INTEGER)) {
      malformed(path, 'ManagedCursorInfo', `cursors_ledger_id ${cursorsLedgerId} is not -1 or a ledger id`);
    }
  }
}
