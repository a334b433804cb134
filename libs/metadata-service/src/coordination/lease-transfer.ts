import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { leasePath, ownerPath } from '../records/layout.js';
import { checkEligible, ownableTopicWithLease, resolveOwnableTopic, toLease, type Lease } from './leases.js';
import { firstThenFresh, sideBySide } from '../records/side-by-side.js';
import { isLive, listLiveOwners, requireLiveOwner } from './owner-sessions.js';
import { placeTopic } from './placement.js';
import { LeaseRecordSchema, OwnerRecordSchema, type LeaseRecord, type OwnerRecord } from '../records/records.js';
import { readRecord, writeRecord } from '../records/store-records.js';
import type { TopicScope } from '../admin/topic-scope.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * Lease transfers (PIP-307's hand-over): the holder gives its lease to another
 * live owner by compare-and-set, so the target owns the topic at once instead
 * of after the lease lapses. The record remembers who handed it over until
 * the target takes it up (AcquireLease), and until then the source may take
 * it back (ReclaimLease) when the target fails to load the topic. Whichever
 * of take-up and reclaim writes first wins; the other finds the version moved.
 */

function leaseLost(scope: TopicScope): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataServiceReason.LEASE_LOST,
    `this session does not hold the lease of ${scope.topic.toString()}: only its holder can hand it over`,
  );
}

function targetUnavailable(instanceId: string, why: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataServiceReason.NO_LIVE_OWNER,
    `instance ${instanceId} cannot take the topic: ${why}`,
    { details: { instanceId } },
  );
}

/** The owner to hand the topic to: the one named, or the placement among the group's others. */
async function chooseTarget(
  context: AdminContext,
  scope: TopicScope,
  holder: OwnerRecord,
  targetInstanceId: string,
): Promise<OwnerRecord> {
  if (targetInstanceId === holder.instanceId) {
    throw invalidArgument(
      MetadataServiceReason.TRANSFER_TO_SELF,
      `instance ${targetInstanceId} already holds ${scope.topic.toString()}`,
    );
  }
  if (targetInstanceId === '') {
    const owners = await listLiveOwners(context, holder.group, holder.role);
    const chosen = placeTopic(owners, scope.topic.toString(), holder.instanceId);
    if (chosen === undefined) {
      throw new LedgerlineError(
        'UNAVAILABLE',
        MetadataServiceReason.NO_LIVE_OWNER,
        `no other live ${holder.role} owner in group ${holder.group} can take ${scope.topic.toString()}`,
        { details: { group: holder.group, role: holder.role } },
      );
    }
    return chosen;
  }
  const found = await readRecord(context.store, ownerPath(holder.group, targetInstanceId), OwnerRecordSchema);
  if (found === undefined || !isLive(found.record, context.now()))
    throw targetUnavailable(targetInstanceId, `no live owner of that id is registered in group ${holder.group}`);
  if (found.record.draining === true) throw targetUnavailable(targetInstanceId, 'it is draining');
  return found.record;
}

/** Hands the lease of `topicName`, held by `sessionId`, to `targetInstanceId` ('' = the placement's choice). */
export async function transferLease(
  context: AdminContext,
  topicName: string,
  sessionId: string,
  targetInstanceId: string,
): Promise<Lease> {
  const [holder, { scope, current: stored }] = await sideBySide(
    requireLiveOwner(context, sessionId),
    ownableTopicWithLease(context, topicName),
  );
  const target = await chooseTarget(context, scope, holder, targetInstanceId);
  checkEligible(scope, target);
  const path = leasePath(scope.topic);
  const readLease = firstThenFresh(stored, () => readRecord(context.store, path, LeaseRecordSchema));
  return retryOnConflict(`handing over the lease of ${scope.topic.toString()}`, async () => {
    const current = await readLease();
    if (current === undefined || current.record.sessionId !== sessionId) throw leaseLost(scope);
    const record: LeaseRecord = {
      sessionId: target.sessionId,
      group: target.group,
      instanceId: target.instanceId,
      advertisedAddress: target.advertisedAddress,
      acquiredAtMs: context.now(),
      handedOverBy: sessionId,
    };
    const version = await writeRecord(context.store, path, record, current.version);
    return toLease(scope.topic, { record, version, createdAtMs: 0, modifiedAtMs: 0 });
  });
}

/**
 * Takes back a lease `sessionId` handed over at `version`, while its target
 * has not taken it up; LEASE_TAKEN_UP (naming the holder) once it has.
 */
export async function reclaimLease(
  context: AdminContext,
  topicName: string,
  sessionId: string,
  version: number,
): Promise<Lease> {
  const owner = await requireLiveOwner(context, sessionId);
  const scope = await resolveOwnableTopic(context, topicName);
  const path = leasePath(scope.topic);
  return retryOnConflict(`reclaiming the lease of ${scope.topic.toString()}`, async () => {
    const current = await readRecord(context.store, path, LeaseRecordSchema);
    if (current === undefined || current.version !== version || current.record.handedOverBy !== sessionId) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.LEASE_TAKEN_UP,
        `the lease of ${scope.topic.toString()} was taken up by instance ${current?.record.instanceId ?? '(none)'}`,
        {
          details: {
            instanceId: current?.record.instanceId ?? '',
            advertisedAddress: current?.record.advertisedAddress ?? '',
          },
        },
      );
    }
    const record: LeaseRecord = {
      sessionId,
      group: owner.group,
      instanceId: owner.instanceId,
      advertisedAddress: owner.advertisedAddress,
      acquiredAtMs: context.now(),
    };
    const written = await writeRecord(context.store, path, record, current.version);
    return toLease(scope.topic, { record, version: written, createdAtMs: 0, modifiedAtMs: 0 });
  });
}

/** Marks the session's owner as draining (or not): lookups place no unleased topic on a draining owner. */
export async function setOwnerDraining(context: AdminContext, sessionId: string, draining: boolean): Promise<void> {
  const owner = await requireLiveOwner(context, sessionId);
  const path = ownerPath(owner.group, owner.instanceId);
  await retryOnConflict(`marking instance ${owner.instanceId} draining`, async () => {
    const current = await readRecord(context.store, path, OwnerRecordSchema);
    if (current === undefined || current.record.sessionId !== sessionId) {
      // Re-registered or expired meanwhile: SESSION_EXPIRED, or nothing to mark.
      await requireLiveOwner(context, sessionId);
      return;
    }
    await writeRecord(context.store, path, { ...current.record, draining }, current.version);
  });
}
