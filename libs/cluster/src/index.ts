export { LocalCluster, roleAvailable, MAX_INSTANCES_PER_ROLE, MAX_REDIS_CLUSTER_MASTERS } from './local-cluster.js';
export type { LocalClusterOptions } from './local-cluster.js';
export { ServiceInstance } from './service-instance.js';
export { CLUSTER_ROLES, READ_ONLY_GROUP, ROLE_SPECS, roleSpec } from './roles.js';
export type { ClusterRole, RoleSpec, InstanceContext } from './roles.js';
export {
  DEFAULT_PROBE_TIMEOUT_MS,
  clusterStatus,
  formatClusterStatus,
  leasesHeld,
  metricSum,
  scrapeMetrics,
} from './cluster-status.js';
export type { ProcessStatus } from './cluster-status.js';
export {
  DEFAULT_DESCRIPTION_FILE,
  readClusterDescription,
  writeClusterDescription,
  removeClusterDescription,
} from './cluster-description.js';
export type { ClusterDescription } from './cluster-description.js';
export { checkHealth, tcpConnects } from './health.js';
export type { ClusterTlsFiles } from './health.js';
export type { HealthStatus } from './health.js';
export { ClusterReason } from './reasons.js';
export type { ClusterReasonValue } from './reasons.js';
// What the CLI and the test rig (@ledgerline/cluster-harness, @ledgerline/pod-runner) use besides the cluster itself.
export { startLocalRedis, startLocalNats, startLocalRedisCluster } from './local-servers.js';
export type { LocalServer, LocalRedisCluster, LocalRedisOptions } from './local-servers.js';
export { ChildProcessGroup } from './child-process-group.js';
export { findRepositoryRoot, launchApp, hasApp } from './launcher.js';
export type { Launch } from './launcher.js';
