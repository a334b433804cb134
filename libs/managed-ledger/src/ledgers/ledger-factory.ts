import { OwnerTag, type LedgerStore, type LedgerWriter } from '@ledgerline/ledger-store';
import type { LedgerComponentName } from '@ledgerline/ledger-info';
import type { ManagedLedgerMetadata } from '../metadata/metadata-access.js';

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

/**
 * Allocates a ledger id and creates the ledger, tagged with its owner. A
 * create that failed may still have made the ledger (its answer was lost);
 * nothing names the id yet, so it is deleted again rather than left behind.
 */
export async function createOwnedLedger(
  metadata: ManagedLedgerMetadata,
  store: LedgerStore,
  owner: LedgerOwner,
): Promise<LedgerWriter> {
  const ledgerId = await metadata.allocateLedgerId();
  try {
    return await store.create(ledgerId, { ownerTags: ownerTags(owner) });
  } catch (err) {
    discardUnreferencedLedger(store, ledgerId);
    throw err;
  }
}

/**
 * Freezes a ledger another writer may still hold (or that our own write left
 * in doubt) and seals it at its last-add-confirmed, which it returns.
 */
export async function fenceAndClose(store: LedgerStore, ledgerId: number): Promise<number> {
  await store.fence(ledgerId);
  return store.closeLedger(ledgerId);
}

/**
 * Deletes a ledger we created if the ManagedLedgerInfo names it nowhere (not
 * in the list, not deletable). Used once a write that would have named it is
 * known to be lost or overtaken by another owner: had it landed, whoever
 * wrote after it recovered the ledger into the list or the deletable set. If
 * the node cannot be read, the ledger is left to the orphan sweep.
 */
export async function discardIfUnnamed(
  metadata: ManagedLedgerMetadata,
  store: LedgerStore,
  path: string,
  ledgerId: number,
): Promise<void> {
  const stored = await metadata.getManagedLedgerInfo(path).catch(() => null);
  if (stored === null) return;
  const named =
    stored?.value.ledgerInfo.some((l) => Number(l.ledgerId) === ledgerId) === true ||
    stored?.value.deletableLedgers.some((d) => Number(d.ledgerId) === ledgerId) === true;
  if (!named) await store.delete(ledgerId).catch(() => undefined);
}

/** Deletes a ledger that no metadata references; failures are left to the orphan sweep. */
export function discardUnreferencedLedger(store: LedgerStore, ledgerId: number): void {
  void store.delete(ledgerId).catch(() => undefined);
}
