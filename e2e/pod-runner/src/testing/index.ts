export { DEV_DEPLOYMENTS, DEV_OVERLAY_APPS, PodWorkload, podLogTails } from './pod-workload.js';
export { ensureAppBundles, staleBundles } from './app-bundles.js';
export type { WorkloadSummary } from './pod-workload.js';
export {
  NO_VIOLATIONS,
  modelViolations,
  ownerPodOf,
  ownerMovedOff,
  longestStretch,
  stretchAcross,
  summaryFigures,
} from './pod-checks.js';
export { devOverlayRun, downAndLeftovers, podSpecRun, twoWriterOwnersUnderLoad } from './pod-spec-run.js';
export { storedLedgers } from './stored-ledgers.js';
export type { StoredLedger } from './stored-ledgers.js';
export type { PodSpecRun } from './pod-spec-run.js';
