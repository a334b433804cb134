import { OwnerTag, type LedgerStore, type LedgerWriter } from '@ledgerline/ledger-store';
import type { LedgerComponentName } from './managed-ledger-info.js';
import type { ManagedLedgerMetadata } from './metadata-access.js';

export interface LedgerOwner {
  topic: string;
  /** The managed ledger path. */
  path: string;
  component: LedgerComponentName;
  cursorName?: string;
}

/** The owner tags a ledger carries, so the garbage collector can check whose it is before deleting it. */
export function ownerTags(owner: LedgerOwner): Record<string, string> {
  const tags: Record<string, string> = {
    [OwnerTag.topic]: owner.topic,
    [OwnerTag.managedLedger]: owner.path,
    [OwnerTag.component]: owner.component,
  };
  if (owner.cursorName !== undefined) tags[OwnerTag.cursor] = owner.cursorName;
  return tags;
}

/** Allocates a ledger id and creates the ledger, tagged with its owner. */
export async function createOwnedLedger(
  metadata: ManagedLedgerMetadata,
  store: LedgerStore,
  owner: LedgerOwner,
): Promise<LedgerWriter> {
  const ledgerId = await metadata.allocateLedgerId();
  return store.create(ledgerId, { ownerTags: ownerTags(owner) });
}

/**
 * Freezes a ledger another writer may still hold (or that our own write left
 * in doubt) and seals it at its last-add-confirmed, which it returns.
 */
export async function fenceAndClose(store: LedgerStore, ledgerId: number): Promise<number> {
  await store.fence(ledgerId);
  return store.closeLedger(ledgerId);
}

/** Deletes a ledger that no metadata references; failures are left to the orphan sweep. */
export function discardUnreferencedLedger(store: LedgerStore, ledgerId: number): void {
  void store.delete(ledgerId).catch(() => undefined);
}
