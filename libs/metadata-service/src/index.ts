export { startMetadataService, metadataServices } from './metadata-server.js';
export type { MetadataServiceOptions, RunningMetadataService } from './metadata-server.js';
export { startClusterMetadataService, runClusterMetadataService } from './cluster.js';
export { clusterConfigSchema, standaloneConfigSchema, maintenanceSettings } from './config.js';
export type { ClusterConfig, StandaloneConfig, MaintenanceConfig } from './config.js';
export { MetadataAdmin } from './metadata-admin.js';
export type { MetadataAdminOptions } from './metadata-admin.js';
export type { NamespaceInfo } from './admin/namespaces.js';
export type { TopicInfo } from './admin/topics.js';
export type { TopicCreateResult } from './admin/topic-batch.js';
export type { TopicPage } from './listing/topic-listing.js';
export type { LookupAnswer } from './coordination/lookup.js';
export type { Lease } from './coordination/leases.js';
export type { OwnerRegistration } from './coordination/owner-sessions.js';
export type { PolicyInput } from './admin/policies.js';
export type { RecountResult } from './admin/topic-recount.js';

// For other packages and tools: the metadata layout, the policy defaults and every bound the service enforces.
export {
  TENANTS_DIR,
  NAMESPACES_DIR,
  TOPIC_COUNTS_DIR,
  PARTITIONED_TOPICS_DIR,
  DELETING_TOPICS_DIR,
  NAMESPACE_READERS_DIR,
  OWNERS_DIR,
  SESSIONS_DIR,
  LEASES_DIR,
  deletingTopicPath,
  deletingTopicsDir,
  leasePath,
} from './records/layout.js';
export { DEFAULT_POLICIES, DEFAULT_OWNER_GROUP } from './admin/policies.js';
export * from './limits.js';
export { MetadataMaintenance } from './maintenance.js';
export type { MaintenanceOptions } from './maintenance.js';
export { MetadataServiceReason } from '@ledgerline/metadata-contract';
export { storePolicySource } from './admin/permissions.js';
export type { AuthPolicies, NamespacePermissions } from './admin/permissions.js';
