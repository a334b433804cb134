export { PodWorkload, ensureAppBundles } from './pod-workload.js';
export type { WorkloadSummary } from './pod-workload.js';
export { ownerPodOf, longestStretch, stretchAcross } from './pod-checks.js';
