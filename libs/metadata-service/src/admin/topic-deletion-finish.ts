import { parsePersistenceName } from '@ledgerline/naming';
import { ManagedLedgerState } from '@ledgerline/proto';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { deletingTopicPath } from '../records/layout.js';
import { decodeManagedLedgerInfo } from '../records/managed-ledger-nodes.js';
import { deleteIfUnchanged } from '../records/store-records.js';

export type FinishOutcome = 'removed' | 'changed' | 'missing';

/**
 * The last step of a topic deletion (PIP-129 phase 2), for the garbage
 * collector: once a DELETING node holds no marker, it is removed by
 * compare-and-set on the version the collector read, so a topic re-created
 * with the same name meanwhile (a revived node, new version) is left alone;
 * then its `/admin/deleting-topics` record goes, unless the topic was
 * re-created. The namespace's topic count was already released when the
 * topic was deleted (topics.ts), so nothing is released twice here.
 */
export async function finishTopicDeletion(
  context: AdminContext,
  managedLedgerPath: string,
  expectedVersion: number,
): Promise<FinishOutcome> {
  const { store } = context;
  const { topic } = parseManagedLedgerPath(managedLedgerPath);
  if (!Number.isSafeInteger(expectedVersion) || expectedVersion < 1) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_VERSION,
      `expected_version must be a version that was read (1 or more), got ${expectedVersion}`,
    );
  }
  const node = await store.get(managedLedgerPath);
  if (node === undefined) {
    await store.delete(deletingTopicPath(topic));
    return 'missing';
  }
  if (node.version !== expectedVersion) return 'changed';
  const info = decodeManagedLedgerInfo(managedLedgerPath, node.value);
  if (info.state !== ManagedLedgerState.DELETING || info.deletableLedgers.length > 0) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataServiceReason.TOPIC_DELETION_UNFINISHED,
      `${managedLedgerPath} is not a deleted topic with every ledger gone; only such a node can be removed`,
      { details: { path: managedLedgerPath } },
    );
  }
  if (!(await deleteIfUnchanged(store, managedLedgerPath, expectedVersion))) return 'changed';
  // A create between the two deletes makes a new node without the record; deleting a missing record is a no-op.
  if (!(await store.exists(managedLedgerPath))) await store.delete(deletingTopicPath(topic));
  return 'removed';
}

function parseManagedLedgerPath(path: string) {
  if (typeof path !== 'string' || !path.startsWith('/managed-ledgers/')) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_MANAGED_LEDGER_PATH,
      `${String(path).slice(0, 200)} is not a managed-ledger path`,
    );
  }
  try {
    return parsePersistenceName(path);
  } catch (error) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_MANAGED_LEDGER_PATH,
      `${path.slice(0, 200)} is not a managed-ledger path: ${LedgerlineError.from(error).message}`,
    );
  }
}
