import { AdminService, FinishTopicDeletionOutcome } from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import type { MetadataAdmin } from './metadata-admin.js';
import { namespaceMessage, policyInput, topicMessage } from './proto-mapping.js';

const FINISH_OUTCOMES = {
  removed: FinishTopicDeletionOutcome.REMOVED,
  changed: FinishTopicDeletionOutcome.CHANGED,
  missing: FinishTopicDeletionOutcome.MISSING,
} as const;

/** ledgerline.v1.AdminService over MetadataAdmin. */
export function adminServiceImpl(admin: MetadataAdmin): ServiceImpl<typeof AdminService> {
  return {
    async createTenant(request) {
      const tenant = await admin.createTenant(request.tenant, request.adminRoles);
      return { tenant: { name: tenant.name, adminRoles: tenant.adminRoles, createdAtMs: BigInt(tenant.createdAtMs) } };
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
    async createTopic(request) {
      return { topic: topicMessage(await admin.createTopic(request.topic, request.partitions)) };
    },
    async createTopics(request) {
      return { results: await admin.createTopics(request.topics) };
    },
    async getTopic(request) {
      return { topic: topicMessage(await admin.getTopic(request.topic)) };
    },
    async deleteTopic(request) {
      return { deletableLedgerIds: await admin.deleteTopic(request.topic) };
    },
    async listTopics(request) {
      return admin.listTopics(request.namespace, request.pageToken, request.pageSize);
    },
    async countTopics(request) {
      return { count: BigInt(await admin.countTopics(request.namespace)) };
    },
    async finishTopicDeletion(request) {
      const outcome = await admin.finishTopicDeletion(request.managedLedgerPath, Number(request.expectedVersion));
      return { outcome: FINISH_OUTCOMES[outcome] };
    },
  };
}
