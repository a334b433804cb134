export { PodRunner, UP_TIMEOUT_MS } from './pod-runner.js';
export type { PodRunnerOptions, PodStatus } from './pod-runner.js';
export { PodRunnerReason } from './reasons.js';
export type { PodRunnerReasonValue } from './reasons.js';
export { callRunner, serveControl, readRunState, DEFAULT_RUN_DIR } from './control.js';
export type { RunState } from './control.js';
// What the pod tests and the pods command line (cli.ts) use besides the runner itself.
export { Pod } from './pod.js';
export { parseManifests, renderOverlay } from './manifests.js';
export type { Manifests, KubeObject, Workload, Service } from './manifests.js';
export { namespacesWithPrefix, linksWithPrefix, removeByPrefix } from './network.js';
export { RUN_PREFIX_ROOT, sweepStaleRuns } from './run-registry.js';
export { processAlive } from './process-alive.js';
