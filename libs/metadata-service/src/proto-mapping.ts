import type { MessageInitShape } from '@bufbuild/protobuf';
import {
  OwnerRole,
  type LeaseSchema,
  type NamespaceInfoSchema,
  type OwnerInfoSchema,
  type Policies,
  type PoliciesSchema,
  type TenantInfoSchema,
  type TopicInfoSchema,
} from '@ledgerline/proto';
import { invalidArgument } from '@ledgerline/errors';
import type { Lease } from './coordination/leases.js';
import type { Tenant } from './admin/tenants.js';
import type { NamespaceInfo } from './admin/namespaces.js';
import type { PolicyInput } from './admin/policies.js';
import type { OwnerRecord, OwnerRoleName, PoliciesRecord } from './records/records.js';
import type { TopicInfo } from './admin/topics.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { loadMessage } from './records/owner-load.js';

/** Conversions between the wire messages and the service's own types. */

export function policyInput(policies: Policies | undefined): PolicyInput {
  if (policies === undefined) return {};
  return {
    numberOfTopicBuckets: policies.numberOfTopicBuckets,
    maxTopics: policies.maxTopics,
    retentionTimeMinutes: policies.retentionTimeMinutes,
    retentionSizeMb: policies.retentionSizeMb,
    ownerGroup: policies.ownerGroup,
    writerNamespace: policies.writerNamespace,
    readonly: policies.readonly,
    allowAutoTopicCreation: policies.allowAutoTopicCreation,
  };
}

export function policiesMessage(policies: PoliciesRecord): MessageInitShape<typeof PoliciesSchema> {
  return {
    numberOfTopicBuckets: policies.numberOfTopicBuckets,
    maxTopics: policies.maxTopics,
    retentionTimeMinutes: BigInt(policies.retentionTimeMinutes),
    retentionSizeMb: BigInt(policies.retentionSizeMb),
    ownerGroup: policies.ownerGroup,
    ...(policies.writerNamespace === '' ? {} : { writerNamespace: policies.writerNamespace }),
    readonly: policies.readonly,
    allowAutoTopicCreation: policies.allowAutoTopicCreation,
  };
}

export function tenantMessage(tenant: Tenant): MessageInitShape<typeof TenantInfoSchema> {
  return { name: tenant.name, adminRoles: tenant.adminRoles, createdAtMs: BigInt(tenant.createdAtMs) };
}

export function namespaceMessage(info: NamespaceInfo): MessageInitShape<typeof NamespaceInfoSchema> {
  return {
    name: info.name,
    policies: policiesMessage(info.policies),
    createdAtMs: BigInt(info.createdAtMs),
    version: BigInt(info.version),
  };
}

export function topicMessage(info: TopicInfo): MessageInitShape<typeof TopicInfoSchema> {
  return {
    name: info.name,
    partitions: info.partitions,
    managedLedgerPath: info.managedLedgerPath,
    createdAtMs: BigInt(info.createdAtMs),
    topicId: info.topicId === undefined ? new Uint8Array(0) : Buffer.from(info.topicId, 'hex'),
  };
}

export function roleName(role: OwnerRole): OwnerRoleName {
  if (role === OwnerRole.WRITER) return 'writer';
  if (role === OwnerRole.READONLY) return 'readonly';
  if (role === OwnerRole.KAFKA_GATEWAY) return 'kafka-gateway';
  throw invalidArgument(
    MetadataServiceReason.INVALID_OWNER_ROLE,
    'an owner role is OWNER_ROLE_WRITER, OWNER_ROLE_READONLY or OWNER_ROLE_KAFKA_GATEWAY',
  );
}

const ROLE_VALUES: Record<OwnerRoleName, OwnerRole> = {
  writer: OwnerRole.WRITER,
  readonly: OwnerRole.READONLY,
  'kafka-gateway': OwnerRole.KAFKA_GATEWAY,
};

export function roleValue(role: OwnerRoleName): OwnerRole {
  return ROLE_VALUES[role];
}

export function ownerMessage(owner: OwnerRecord): MessageInitShape<typeof OwnerInfoSchema> {
  return {
    instanceId: owner.instanceId,
    role: roleValue(owner.role),
    group: owner.group,
    advertisedAddress: owner.advertisedAddress,
    registeredAtMs: BigInt(owner.registeredAtMs),
    ...(owner.load === undefined ? {} : { load: loadMessage(owner.load) }),
    loadReportedAtMs: BigInt(owner.loadReportedAtMs ?? 0),
  };
}

export function leaseMessage(lease: Lease): MessageInitShape<typeof LeaseSchema> {
  return {
    topic: lease.topic,
    instanceId: lease.instanceId,
    advertisedAddress: lease.advertisedAddress,
    version: BigInt(lease.version),
    acquiredAtMs: BigInt(lease.acquiredAtMs),
  };
}

/**
 * An int64 from the wire that must fit a JavaScript number (versions, ids,
 * durations); `reason` names the field's own refusal (INVALID_VERSION, INVALID_SESSION_TTL).
 */
export function safeNumber(value: bigint, what: string, reason = 'INVALID_VERSION'): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidArgument(reason, `${what} must be from 0 to ${Number.MAX_SAFE_INTEGER}, got ${value}`);
  }
  return Number(value);
}
