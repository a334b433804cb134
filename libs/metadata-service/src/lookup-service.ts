import { TopicName } from '@ledgerline/naming';
import { LookupService } from '@ledgerline/proto';
import { invalidArgument } from '@ledgerline/errors';
import { type ServiceImpl } from '@ledgerline/rpc';
import type { MetadataAdmin } from './metadata-admin.js';
import { leaseMessage, ownerMessage, roleName, roleValue, safeNumber } from './proto-mapping.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { loadRecord } from './records/owner-load.js';

/** ledgerline.v1.LookupService over MetadataAdmin. */
export function lookupServiceImpl(admin: MetadataAdmin): ServiceImpl<typeof LookupService> {
  return {
    async registerOwner(request) {
      const owner = request.owner;
      if (owner === undefined)
        throw invalidArgument(MetadataServiceReason.MISSING_OWNER, 'RegisterOwner needs the owner to register');
      const registered = await admin.registerOwner(
        {
          instanceId: owner.instanceId,
          role: roleName(owner.role),
          group: owner.group,
          advertisedAddress: owner.advertisedAddress,
        },
        safeNumber(request.sessionTtlMs, 'session_ttl_ms', 'INVALID_SESSION_TTL'),
      );
      return { sessionId: registered.sessionId, sessionTtlMs: BigInt(registered.ttlMs) };
    },
    async keepAliveOwner(request) {
      await admin.keepAliveOwner(request.sessionId, request.load === undefined ? undefined : loadRecord(request.load));
      return {};
    },
    watchOwnerSession(request, context) {
      return admin.sessionLiveness.watch(request.sessionId, context.signal, context.draining);
    },
    async unregisterOwner(request) {
      await admin.unregisterOwner(request.sessionId);
      return {};
    },
    async listOwners(request) {
      const role = request.role === 0 ? undefined : roleName(request.role);
      const owners = await admin.listOwners(request.group, role);
      return { owners: owners.map(ownerMessage) };
    },
    ...leaseHandlers(admin),
    async setOwnerDraining(request) {
      await admin.setOwnerDraining(request.sessionId, request.draining);
      return {};
    },
    async lookupTopic(request) {
      const answer = await lookupPastUnreachable(admin, request);
      return { ...answer, role: roleValue(answer.role) };
    },
    async allocateLedgerId() {
      return { ledgerId: BigInt(await admin.allocateLedgerId()) };
    },
  };
}

/**
 * A lookup; when the client could not reach the owner it names (its
 * unreachable_address), the topic is first moved off that owner if it still
 * answers this service (unreachable-owners.ts), and the lookup answers anew.
 */
async function lookupPastUnreachable(
  admin: MetadataAdmin,
  request: { topic: string; group: string; unreachableAddress: string },
) {
  const answer = await admin.lookupTopic(request.topic, request.group);
  const { unreachableAddress } = request;
  if (!answer.owned || unreachableAddress === '' || unreachableAddress !== answer.advertisedAddress) return answer;
  const leased = answer.redirectTopic === '' ? TopicName.parse(request.topic).toString() : answer.redirectTopic;
  if (!(await admin.unreachableOwners.moveOff(leased, unreachableAddress))) return answer;
  return admin.lookupTopic(request.topic, request.group);
}

/** The lease calls: taking, confirming, giving up, handing over and taking back a topic's lease. */
function leaseHandlers(admin: MetadataAdmin) {
  return {
    async acquireLease(request) {
      return { lease: leaseMessage(await admin.acquireLease(request.topic, request.sessionId)) };
    },
    async renewLease(request) {
      return { lease: leaseMessage(await admin.renewLease(request.topic, request.sessionId)) };
    },
    async confirmLeases(request) {
      return { lost: await admin.confirmLeases(request.sessionId, request.topics) };
    },
    async releaseLease(request) {
      await admin.releaseLease(request.topic, request.sessionId);
      return {};
    },
    async transferLease(request) {
      return {
        lease: leaseMessage(await admin.transferLease(request.topic, request.sessionId, request.targetInstanceId)),
      };
    },
    async reclaimLease(request) {
      const version = safeNumber(request.version, 'version', 'INVALID_VERSION');
      return { lease: leaseMessage(await admin.reclaimLease(request.topic, request.sessionId, version)) };
    },
    async getLease(request) {
      const lease = await admin.getLease(request.topic);
      return lease === undefined ? {} : { lease: leaseMessage(lease) };
    },
  } satisfies Partial<ServiceImpl<typeof LookupService>>;
}
