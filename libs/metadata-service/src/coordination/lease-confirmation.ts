import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { MAX_LEASES_PER_CONFIRM, MetadataServiceReason } from '@ledgerline/metadata-contract';
import pMap from 'p-map';
import type { AdminContext } from '../admin-context.js';
import { resolveTopic } from '../admin/topic-scope.js';
import { leasePath } from '../records/layout.js';
import { LeaseRecordSchema } from '../records/records.js';
import { readRecord } from '../records/store-records.js';
import { leaseLost } from './leases.js';
import { requireLiveOwner } from './owner-sessions.js';

/** A topic whose lease the asking session no longer holds, and why. */
export interface LostLease {
  topic: string;
  reason: string;
  message: string;
}

/** Topics read at once: the store's client pipelines concurrent reads. */
const READ_CONCURRENCY = 64;

/**
 * An owner's periodic check of every lease it holds, in one call: the
 * session must be live (else SESSION_EXPIRED for the whole call, as each
 * lease lapsed with it), and each topic's lease must name it. Only reads: the
 * session lives by its keep-alives, so confirming N leases costs N + 2 reads
 * where N renewals cost N session writes, each announced to every watcher.
 * A name that is not a topic name fails the call (INVALID_ARGUMENT): an owner
 * only holds topics it could parse.
 */
export async function confirmLeases(
  context: AdminContext,
  sessionId: string,
  topics: readonly string[],
): Promise<LostLease[]> {
  if (topics.length > MAX_LEASES_PER_CONFIRM) {
    throw invalidArgument(
      MetadataServiceReason.BATCH_TOO_LARGE,
      `ConfirmLeases takes at most ${MAX_LEASES_PER_CONFIRM} topics a call, got ${topics.length}: split them`,
    );
  }
  await requireLiveOwner(context, sessionId);
  const verdicts = await pMap(topics, (topic) => confirmOne(context, sessionId, topic), {
    concurrency: READ_CONCURRENCY,
  });
  return verdicts.filter((verdict): verdict is LostLease => verdict !== undefined);
}

async function confirmOne(context: AdminContext, sessionId: string, topic: string): Promise<LostLease | undefined> {
  let scope;
  try {
    scope = await resolveTopic(context, topic);
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (error.code !== 'NOT_FOUND') throw error;
    return { topic, reason: error.reason, message: error.message };
  }
  const current = await readRecord(context.store, leasePath(scope.topic), LeaseRecordSchema);
  if (current !== undefined && current.record.sessionId === sessionId) return undefined;
  const { reason, message } = leaseLost(scope.topic);
  return { topic, reason, message };
}
