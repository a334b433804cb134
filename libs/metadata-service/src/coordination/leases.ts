import type { TopicName } from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { firstThenFresh, sideBySide } from '../records/side-by-side.js';
import { leasePath, ownerPath, partitionedTopicPath } from '../records/layout.js';
import { readLiveManagedLedger } from '../records/managed-ledger-nodes.js';
import { isLive, keepAlive, requireLiveOwner } from './owner-sessions.js';
import { LeaseRecordSchema, OwnerRecordSchema, type LeaseRecord, type OwnerRecord } from '../records/records.js';
import { readRecord, writeRecord, type VersionedRecord } from '../records/store-records.js';
import { resolveTopic, storagePath, topicNotFound, type TopicScope } from '../admin/topic-scope.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * Topic leases. A lease names the owner instance of a topic and lives exactly
 * as long as that owner's session: when the session lapses, the lease is dead
 * and another live instance of the right group may take it. The node is never
 * deleted while the topic lives (a release writes a free record), so its
 * version, the lease epoch, only grows.
 */
export interface Lease {
  topic: string;
  instanceId: string;
  advertisedAddress: string;
  /** The lease epoch: it grows with every acquisition. */
  version: number;
  acquiredAtMs: number;
}

export function toLease(topic: TopicName, found: VersionedRecord<LeaseRecord>): Lease {
  const { instanceId, advertisedAddress, acquiredAtMs } = found.record;
  return { topic: topic.toString(), instanceId, advertisedAddress, version: found.version, acquiredAtMs };
}

/** Resolves a topic that may be owned: it must exist and not be a partitioned parent (its partitions are owned). */
export async function resolveOwnableTopic(context: AdminContext, name: string | TopicName): Promise<TopicScope> {
  const scope = await resolveTopic(context, name);
  await checkOwnable(context, scope);
  return scope;
}

/** Both checks of an ownable topic, read side by side; a partitioned parent is reported before a missing topic. */
async function checkOwnable(context: AdminContext, scope: TopicScope): Promise<void> {
  const [partitioned, live] = await sideBySide(
    context.store.exists(partitionedTopicPath(scope.storageTopic)),
    readLiveManagedLedger(context.store, storagePath(scope)),
  );
  if (partitioned) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataServiceReason.TOPIC_IS_PARTITIONED,
      `${scope.topic.toString()} is a partitioned topic: look up or own its partitions (${scope.topic.toString()}-partition-<i>)`,
    );
  }
  if (live === undefined) throw topicNotFound(scope.topic);
}

/**
 * An ownable topic and its lease as stored, read side by side with the
 * checks: a transfer's pause waits for every round trip of its lease calls in
 * a row, so they are made as few as the checks allow. The lease read serves
 * a compare-and-set's first attempt (a conflict re-reads it).
 */
export async function ownableTopicWithLease(
  context: AdminContext,
  name: string | TopicName,
): Promise<{ scope: TopicScope; current: VersionedRecord<LeaseRecord> | undefined }> {
  const scope = await resolveTopic(context, name);
  const [, current] = await sideBySide(
    checkOwnable(context, scope),
    readRecord(context.store, leasePath(scope.topic), LeaseRecordSchema),
  );
  return { scope, current };
}

/** True when the lease is held by a live session. */
export async function holderIsLive(context: AdminContext, lease: LeaseRecord): Promise<boolean> {
  if (lease.sessionId === '') return false;
  const owner = await readRecord(context.store, ownerPath(lease.group, lease.instanceId), OwnerRecordSchema);
  return owner !== undefined && owner.record.sessionId === lease.sessionId && isLive(owner.record, context.now());
}

export function checkEligible(scope: TopicScope, owner: OwnerRecord): void {
  const wanted = scope.readonly ? 'readonly' : 'writer';
  if (owner.role !== wanted) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataServiceReason.WRONG_OWNER_ROLE,
      `${scope.topic.toString()} is owned by ${wanted} owners; instance ${owner.instanceId} is a ${owner.role} owner`,
    );
  }
  const group = scope.namespaceRecord.policies.ownerGroup;
  if (owner.group !== group) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      MetadataServiceReason.WRONG_OWNER_GROUP,
      `topics of ${scope.topic.namespaceName.toString()} are owned by group ${group}; instance ${owner.instanceId} is in ${owner.group}`,
      { details: { group, instanceGroup: owner.group } },
    );
  }
}

export async function acquireLease(context: AdminContext, topicName: string, sessionId: string): Promise<Lease> {
  const [owner, { scope, current: stored }] = await sideBySide(
    requireLiveOwner(context, sessionId),
    ownableTopicWithLease(context, topicName),
  );
  checkEligible(scope, owner);
  const path = leasePath(scope.topic);
  const readLease = firstThenFresh(stored, () => readRecord(context.store, path, LeaseRecordSchema));
  return retryOnConflict(`acquiring the lease of ${scope.topic.toString()}`, async () => {
    const current = await readLease();
    if (current !== undefined && current.record.sessionId === sessionId) return takeUp(context, scope.topic, current);
    if (current !== undefined && (await holderIsLive(context, current.record))) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.LEASE_HELD,
        `${scope.topic.toString()} is owned by instance ${current.record.instanceId} until its session lapses`,
        { details: { instanceId: current.record.instanceId, advertisedAddress: current.record.advertisedAddress } },
      );
    }
    const record: LeaseRecord = {
      sessionId,
      group: owner.group,
      instanceId: owner.instanceId,
      advertisedAddress: owner.advertisedAddress,
      acquiredAtMs: context.now(),
    };
    const version = await writeRecord(context.store, path, record, current?.version ?? 'absent');
    return toLease(scope.topic, { record, version, createdAtMs: 0, modifiedAtMs: 0 });
  });
}

/**
 * A lease this session already holds. One handed over by a transfer is taken
 * up here, by compare-and-set: from then on its source can no longer reclaim it.
 */
async function takeUp(context: AdminContext, topic: TopicName, current: VersionedRecord<LeaseRecord>): Promise<Lease> {
  if (current.record.handedOverBy === undefined) return toLease(topic, current);
  const { handedOverBy: _source, ...record } = current.record;
  const version = await writeRecord(context.store, leasePath(topic), record, current.version);
  return toLease(topic, { record, version, createdAtMs: 0, modifiedAtMs: 0 });
}

/** Confirms the lease is still this session's and keeps the session alive. */
export async function renewLease(context: AdminContext, topicName: string, sessionId: string): Promise<Lease> {
  await keepAlive(context, sessionId);
  const scope = await resolveTopic(context, topicName);
  const current = await readRecord(context.store, leasePath(scope.topic), LeaseRecordSchema);
  if (current === undefined || current.record.sessionId !== sessionId) throw leaseLost(scope.topic);
  return toLease(scope.topic, current);
}

/** The session no longer holds the topic's lease: another one does, nobody does, or the topic went. */
export function leaseLost(topic: TopicName): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataServiceReason.LEASE_LOST,
    `this session no longer holds the lease of ${topic.toString()}; stop serving it and acquire it again`,
  );
}

/** Gives a lease up; releasing a lease the session does not hold is a no-op. */
export async function releaseLease(context: AdminContext, topicName: string, sessionId: string): Promise<void> {
  const scope = await resolveTopic(context, topicName);
  const path = leasePath(scope.topic);
  await retryOnConflict(`releasing the lease of ${scope.topic.toString()}`, async () => {
    const current = await readRecord(context.store, path, LeaseRecordSchema);
    if (current === undefined || current.record.sessionId !== sessionId) return;
    const free: LeaseRecord = { ...current.record, sessionId: '', acquiredAtMs: context.now() };
    await writeRecord(context.store, path, free, current.version);
  });
}

/** The live lease of a topic, or undefined when nobody owns it. */
export async function getLiveLease(context: AdminContext, topic: TopicName): Promise<Lease | undefined> {
  const current = await readRecord(context.store, leasePath(topic), LeaseRecordSchema);
  if (current === undefined || !(await holderIsLive(context, current.record))) return undefined;
  return toLease(topic, current);
}
