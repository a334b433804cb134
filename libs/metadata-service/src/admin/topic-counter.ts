import type { NamespaceName } from '@ledgerline/naming';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { isBadVersion, retryOnConflict } from '../records/cas-retry.js';
import { namespacePath, topicCountPath } from '../records/layout.js';
import { CounterRecordSchema, NamespaceRecordSchema, type CounterRecord } from '../records/records.js';
import { readRecord, writeRecord, type VersionedRecord } from '../records/store-records.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * The topic counter of a namespace: how many topics it holds or has reserved.
 * It is what makes `maxTopics` exact and O(1): a create reserves a slot by
 * compare-and-set on this one node before it writes the topic, and gives the
 * slot back if the write fails. A crash between the two leaves the counter
 * above the real count, never below; recountTopics (topic-recount.ts) repairs that.
 */
export async function readTopicCounter(
  context: AdminContext,
  namespace: NamespaceName,
): Promise<VersionedRecord<CounterRecord> | undefined> {
  return readRecord(context.store, topicCountPath(namespace), CounterRecordSchema);
}

/**
 * Creates a zeroed counter for a namespace about to be created. A counter left
 * by a creation that crashed before writing its namespace record is reset;
 * one that belongs to an existing namespace is left alone (the namespace
 * create then fails with NAMESPACE_EXISTS).
 */
export async function createTopicCounter(context: AdminContext, namespace: NamespaceName): Promise<void> {
  const path = topicCountPath(namespace);
  const zero: CounterRecord = { count: 0 };
  await retryOnConflict(`creating the topic counter of ${namespace.toString()}`, async () => {
    try {
      await writeRecord(context.store, path, zero, 'absent');
      return;
    } catch (error) {
      if (!isBadVersion(error)) throw error;
    }
    const existing = await readTopicCounter(context, namespace);
    if (existing === undefined) throw badVersion();
    if (await context.store.exists(namespacePath(namespace))) return;
    await writeRecord(context.store, path, zero, existing.version);
  });
}

export async function deleteTopicCounter(context: AdminContext, namespace: NamespaceName): Promise<void> {
  await context.store.delete(topicCountPath(namespace));
}

/**
 * Rewrites the counter unchanged at the version read. Changes that make topic
 * creation invalid (a namespace turning read-only, being deleted) do this
 * after changing the namespace record: a reservation reads the counter before
 * the namespace record, so it either sees the change or fails its own
 * compare-and-set on the counter and re-reads.
 */
export async function touchTopicCounter(
  context: AdminContext,
  namespace: NamespaceName,
  read: VersionedRecord<CounterRecord>,
) {
  await writeRecord(context.store, topicCountPath(namespace), read.record, read.version);
}

export interface ReservationRequest {
  /** Slots wanted (> 0), or slots given back (< 0). */
  delta: number;
  /** Reserve all `delta` slots or none (partitioned topics); otherwise as many as fit. */
  allOrNothing: boolean;
  /** Write the counter even when its count does not change (see TopicReservations.touch). */
  touch?: boolean;
}

/**
 * One compare-and-set of a namespace's counter serving a batch of requests in
 * order; returns the slots granted to each (releases get their negative delta
 * back). Reads the counter before the namespace record (see touchTopicCounter).
 */
export async function applyReservations(
  context: AdminContext,
  namespace: NamespaceName,
  requests: readonly ReservationRequest[],
): Promise<number[]> {
  const counter = await readTopicCounter(context, namespace);
  const namespaceNode = await readRecord(context.store, namespacePath(namespace), NamespaceRecordSchema);
  const wantsSlots = requests.some((request) => request.delta > 0);
  if (counter === undefined || namespaceNode === undefined || namespaceNode.record.deleting) {
    if (!wantsSlots) return requests.map((request) => request.delta);
    throw new LedgerlineError(
      'NOT_FOUND',
      MetadataServiceReason.NAMESPACE_NOT_FOUND,
      `namespace ${namespace.toString()} does not exist`,
    );
  }
  if (wantsSlots && namespaceNode.record.policies.writerNamespace !== '') throw namespaceReadonly(namespace);
  const maxTopics = namespaceNode.record.policies.maxTopics;
  let count = counter.record.count;
  const granted = requests.map((request) => {
    if (request.delta <= 0) {
      const released = Math.min(count, -request.delta);
      count -= released;
      return -released;
    }
    const room = maxTopics === 0 ? request.delta : Math.max(0, maxTopics - count);
    const grant = request.allOrNothing ? (room >= request.delta ? request.delta : 0) : Math.min(room, request.delta);
    count += grant;
    return grant;
  });
  if (count !== counter.record.count || requests.some((request) => request.touch === true)) {
    await writeRecord(context.store, topicCountPath(namespace), { count } satisfies CounterRecord, counter.version);
  }
  return granted;
}

export function namespaceReadonly(namespace: NamespaceName): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataServiceReason.NAMESPACE_READONLY,
    `namespace ${namespace.toString()} is a read-only reader namespace; write to its writer namespace instead`,
    { details: { namespace: namespace.toString() } },
  );
}

function badVersion(): LedgerlineError {
  return new LedgerlineError(
    'ABORTED',
    ErrorReason.BAD_VERSION,
    'the topic counter changed while it was being created',
  );
}
