export { renderKustomization, strategicMerge, deployFolder } from './render-kustomization.js';
export type { K8sObject } from './render-kustomization.js';
export { Workload, percentile } from './workload.js';
export type { Ack } from './workload.js';
export { ClusterClients } from './clients.js';
export { takeoverSettings } from './takeover-settings.js';
