import { clone, equals } from '@bufbuild/protobuf';
import { ManagedLedgerInfoSchema, type ManagedLedgerInfo } from '@ledgerline/proto';

/**
 * The ManagedLedgerInfo property every new owner bumps when it claims the
 * node (managed-ledger-open.ts of @ledgerline/managed-ledger). It makes any
 * two owners' values differ, so a change that only removed deletable markers
 * can be told apart from a takeover: the garbage collector never touches it.
 */
export const OWNER_EPOCH_PROPERTY = 'ledgerline.owner-epoch';

/**
 * True when `stored` is `mine` with some deletable markers removed and nothing
 * else changed: the garbage collector's compare-and-set after deleting those
 * ledgers (PIP-129 phase 2). The owner adopts such a change and retries its
 * own write on top of it; anything else means another owner (or a topic
 * deletion) and fences it.
 */
export function isCollectorChange(mine: ManagedLedgerInfo, stored: ManagedLedgerInfo): boolean {
  if (stored.deletableLedgers.length >= mine.deletableLedgers.length) return false;
  const mineIds = new Set(mine.deletableLedgers.map((d) => d.ledgerId));
  if (!stored.deletableLedgers.every((d) => mineIds.has(d.ledgerId))) return false;
  return equals(ManagedLedgerInfoSchema, withoutMarkers(mine), withoutMarkers(stored));
}

function withoutMarkers(info: ManagedLedgerInfo): ManagedLedgerInfo {
  const copy = clone(ManagedLedgerInfoSchema, info);
  copy.deletableLedgers = [];
  return copy;
}

/** The owner epoch a node carries; 0 for a node no owner claimed since the property exists. */
export function ownerEpoch(properties: ReadonlyMap<string, string>): number {
  const value = Number(properties.get(OWNER_EPOCH_PROPERTY) ?? '0');
  return Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
