// What the multi-process specs and the benchmarks drive a @ledgerline/cluster LocalCluster with.
export { renderKustomization, strategicMerge, deployFolder } from './render-kustomization.js';
export type { K8sObject } from './render-kustomization.js';
export { Workload, percentile } from './workload.js';
export type { Ack } from './ack-check.js';
export { LatencyLoad } from './latency-load.js';
export { TopicsLoad } from './topics-load.js';
export type { TimedAck } from './latency-load.js';
export { ClusterClients } from './clients.js';
export { takeoverSettings } from './takeover-settings.js';
export { QUICK_BALANCER_SETTINGS } from './balancer-settings.js';
