export { startMetadataService, metadataServices } from './metadata-server.js';
export type { MetadataServiceOptions, RunningMetadataService } from './metadata-server.js';
export { startClusterMetadataService, runClusterMetadataService } from './cluster.js';
export { clusterConfigSchema, standaloneConfigSchema, maintenanceSettings } from './config.js';
export type { ClusterConfig, StandaloneConfig, MaintenanceConfig } from './config.js';
export { MetadataAdmin } from './metadata-admin.js';
export type { MetadataAdminOptions } from './metadata-admin.js';
export type { NamespaceInfo } from './namespaces.js';
export type { TopicInfo } from './topics.js';
export type { TopicCreateResult } from './topic-batch.js';
export type { TopicPage } from './topic-listing.js';
export type { LookupAnswer } from './lookup.js';
export type { Lease } from './leases.js';
export type { OwnerRegistration } from './owner-sessions.js';
export type { PolicyInput } from './policies.js';
export type { RecountResult } from './topic-recount.js';

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
} from './layout.js';
export { DEFAULT_POLICIES, DEFAULT_OWNER_GROUP } from './policies.js';
export * from './limits.js';
export { MetadataMaintenance } from './maintenance.js';
export type { MaintenanceOptions } from './maintenance.js';
export { MetadataServiceReason } from '@ledgerline/metadata-contract';
export { storePolicySource } from './permissions.js';
export type { AuthPolicies, NamespacePermissions } from './permissions.js';
