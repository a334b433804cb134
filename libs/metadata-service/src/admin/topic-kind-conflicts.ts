import type { TopicName } from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { deletingTopicPath, partitionedTopicPath } from '../records/layout.js';
import { markManagedLedgerDeleted, readLiveManagedLedger } from '../records/managed-ledger-nodes.js';
import { writeRecord } from '../records/store-records.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * A topic name is a plain topic (its managed-ledger node) or a partitioned
 * topic (its record under /admin/partitioned-topics), never both. The two live
 * in different nodes, so no single compare-and-set can decide between two
 * creates of different kinds. Each create therefore checks for the other kind
 * before it reserves, and again after its own write: as in Dekker's algorithm,
 * of two racing creates at least one sees the other's write, and a create
 * that sees it undoes its own and answers ABORTED / TOPIC_CREATE_CONFLICT: a
 * retry then finds the winner (TOPIC_EXISTS), or, when both were undone, wins.
 */

/** True when a partitioned topic of this name exists (checked after a plain topic's node is written). */
export async function partitionedTopicExists(context: AdminContext, topic: TopicName): Promise<boolean> {
  return context.store.exists(partitionedTopicPath(topic));
}

/** True when a live plain topic of this name exists (checked after a partitioned topic's record is written). */
export async function plainTopicExists(context: AdminContext, managedLedgerPath: string): Promise<boolean> {
  return (await readLiveManagedLedger(context.store, managedLedgerPath)) !== undefined;
}

/**
 * Undoes the node a plain create wrote, as a topic delete would: a node that
 * still carries ledgers marked deletable (it was revived from a deleted
 * topic, or an owner appended meanwhile) goes back to DELETING with its
 * deletion marker, so no ledger is leaked; a bare node is removed.
 */
export async function undoPlainCreate(context: AdminContext, topic: TopicName, managedLedgerPath: string) {
  await markManagedLedgerDeleted(context.store, managedLedgerPath, context.now(), async () => {
    await writeRecord(context.store, deletingTopicPath(topic), { deletedAtMs: context.now() });
  });
}

/** The refusal after an undo: retryable, since the other create may have been undone as well. */
export function kindConflict(topic: TopicName): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    MetadataServiceReason.TOPIC_CREATE_CONFLICT,
    `${topic.toString()} was being created as a plain and as a partitioned topic at the same time; retry`,
    { details: { topic: topic.toString() } },
  );
}
