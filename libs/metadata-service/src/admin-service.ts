import { AdminService, AuthAction, FinishTopicDeletionOutcome, KafkaGroupIndexState } from '@ledgerline/proto';
import type { NamespacePermissions } from './admin/permissions.js';
import type { ServiceImpl } from '@ledgerline/rpc';
import type { MetadataAdmin } from './metadata-admin.js';
import { namespaceMessage, policyInput, tenantMessage, topicMessage } from './proto-mapping.js';

const FINISH_OUTCOMES = {
  removed: FinishTopicDeletionOutcome.REMOVED,
  changed: FinishTopicDeletionOutcome.CHANGED,
  missing: FinishTopicDeletionOutcome.MISSING,
} as const;

const ACTION_NAMES: Partial<Record<AuthAction, string>> = {
  [AuthAction.PRODUCE]: 'produce',
  [AuthAction.CONSUME]: 'consume',
};

/** Unknown enum values become a name the admin layer refuses with INVALID_PERMISSION. */
function actionNames(actions: readonly AuthAction[]): string[] {
  return actions.map((action) => ACTION_NAMES[action] ?? `action ${action}`);
}

function permissionsMessage(permissions: NamespacePermissions) {
  return Object.fromEntries(
    Object.entries(permissions).map(([role, actions]) => [
      role,
      { actions: actions.map((action) => (action === 'produce' ? AuthAction.PRODUCE : AuthAction.CONSUME)) },
    ]),
  );
}

const INDEX_STATES = {
  partial: KafkaGroupIndexState.PARTIAL,
  complete: KafkaGroupIndexState.COMPLETE,
  unindexed: KafkaGroupIndexState.UNINDEXED,
} as const;

type AdminImpl = ServiceImpl<typeof AdminService>;

/** ledgerline.v1.AdminService over MetadataAdmin. */
export function adminServiceImpl(admin: MetadataAdmin): AdminImpl {
  return { ...tenantAndNamespaceMethods(admin), ...topicAndPermissionMethods(admin), ...kafkaGroupIndexMethods(admin) };
}

type KafkaGroupIndexMethods = Pick<
  AdminImpl,
  'addKafkaGroupPartition' | 'getKafkaGroupIndex' | 'updateKafkaGroupIndex' | 'deleteKafkaGroupIndex'
>;

function kafkaGroupIndexMethods(admin: MetadataAdmin): KafkaGroupIndexMethods {
  return {
    async addKafkaGroupPartition(request) {
      const state = await admin.addKafkaGroupPartition(request.topic, request.group, request.maxPartitions);
      return { state: INDEX_STATES[state] };
    },
    async getKafkaGroupIndex(request) {
      const index = await admin.getKafkaGroupIndex(request.namespace, request.group);
      return { state: INDEX_STATES[index.state], topics: index.topics, version: BigInt(index.version) };
    },
    async updateKafkaGroupIndex(request) {
      const state = await admin.updateKafkaGroupIndex(
        request.namespace,
        request.group,
        request.removeTopics,
        request.markComplete,
      );
      return { state: state === undefined ? KafkaGroupIndexState.UNSPECIFIED : INDEX_STATES[state] };
    },
    async deleteKafkaGroupIndex(request) {
      await admin.deleteKafkaGroupIndex(request.namespace, request.group, Number(request.expectedVersion));
      return {};
    },
  };
}

type TenantAndNamespaceMethods = Pick<
  AdminImpl,
  | 'createTenant'
  | 'listTenants'
  | 'getTenant'
  | 'deleteTenant'
  | 'createNamespace'
  | 'getNamespace'
  | 'updateNamespace'
  | 'setWriterNamespace'
  | 'listNamespaces'
  | 'deleteNamespace'
>;

function tenantAndNamespaceMethods(admin: MetadataAdmin): TenantAndNamespaceMethods {
  return {
    async createTenant(request) {
      return { tenant: tenantMessage(await admin.createTenant(request.tenant, request.adminRoles)) };
    },
    async getTenant(request) {
      return { tenant: tenantMessage(await admin.getTenant(request.tenant)) };
    },
    async listTenants() {
      return { tenants: await admin.listTenants() };
    },
    async deleteTenant(request) {
      await admin.deleteTenant(request.tenant);
      return {};
    },
    async createNamespace(request) {
      return {
        namespace: namespaceMessage(await admin.createNamespace(request.namespace, policyInput(request.policies))),
      };
    },
    async getNamespace(request) {
      return { namespace: namespaceMessage(await admin.getNamespace(request.namespace)) };
    },
    async updateNamespace(request) {
      return {
        namespace: namespaceMessage(await admin.updateNamespace(request.namespace, policyInput(request.policies))),
      };
    },
    async setWriterNamespace(request) {
      return {
        namespace: namespaceMessage(await admin.setWriterNamespace(request.namespace, request.writerNamespace)),
      };
    },
    async listNamespaces(request) {
      return { namespaces: await admin.listNamespaces(request.tenant) };
    },
    async deleteNamespace(request) {
      await admin.deleteNamespace(request.namespace);
      return {};
    },
  };
}

function topicAndPermissionMethods(
  admin: MetadataAdmin,
): Omit<AdminImpl, keyof TenantAndNamespaceMethods | keyof KafkaGroupIndexMethods> {
  return {
    async createTopic(request) {
      return { topic: topicMessage(await admin.createTopic(request.topic, request.partitions)) };
    },
    async createTopics(request) {
      return { results: await admin.createTopics(request.topics) };
    },
    async getTopic(request) {
      return { topic: topicMessage(await admin.getTopic(request.topic)) };
    },
    async getTopicById(request) {
      return { topic: topicMessage(await admin.getTopicById(request.namespace, request.topicId)) };
    },
    async updatePartitionedTopic(request) {
      return {
        topic: topicMessage(
          await admin.updatePartitionedTopic(request.topic, request.partitions, request.validateOnly),
        ),
      };
    },
    async deleteTopic(request) {
      return { deletableLedgerIds: await admin.deleteTopic(request.topic) };
    },
    async listTopics(request) {
      return admin.listTopics(request.namespace, request.pageToken, request.pageSize, request.prefix);
    },
    async countTopics(request) {
      return { count: BigInt(await admin.countTopics(request.namespace)) };
    },
    async grantPermission(request) {
      const permissions = await admin.grantPermission(request.namespace, request.role, actionNames(request.actions));
      return { permissions: permissionsMessage(permissions) };
    },
    async revokePermission(request) {
      return { permissions: permissionsMessage(await admin.revokePermission(request.namespace, request.role)) };
    },
    async getBalancerStatus() {
      const status = await admin.balancerStatus();
      if (status === undefined) return { active: false };
      return {
        active: true,
        leaderId: status.leaderId,
        lastRoundAtMs: BigInt(status.lastRoundAtMs),
        rounds: BigInt(status.rounds),
        movesTotal: BigInt(status.movesTotal),
        decisions: status.decisions,
        owners: status.owners,
        recentMoves: status.recentMoves.map((move) => ({
          ...move,
          atMs: BigInt(move.atMs),
          pausedMs: BigInt(move.pausedMs),
        })),
      };
    },
    async getPermissions(request) {
      const policies = await admin.getAuthPolicies(request.namespace);
      return { permissions: permissionsMessage(policies.permissions), tenantAdminRoles: policies.tenantAdminRoles };
    },
    async finishTopicDeletion(request) {
      const outcome = await admin.finishTopicDeletion(request.managedLedgerPath, Number(request.expectedVersion));
      return { outcome: FINISH_OUTCOMES[outcome] };
    },
  };
}
