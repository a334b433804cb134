/** Why the pod runner could not do what was asked. */
export const PodRunnerReason = {
  /** `kubectl kustomize` failed or is not installed. */
  RENDER_FAILED: 'RENDER_FAILED',
  /** A rendered object cannot run as written (a missing ConfigMap key, an unknown image, a named port no container has). */
  BAD_MANIFEST: 'BAD_MANIFEST',
  /** An `ip` command failed: not root, or the kernel lacks network namespaces, veth or bridges. */
  NETWORK_FAILED: 'NETWORK_FAILED',
  /** The named pod, Deployment or Service is not part of the run. */
  NO_SUCH_OBJECT: 'NO_SUCH_OBJECT',
  /** No pod runner answers on the run folder's control socket. */
  NO_RUNNER: 'NO_RUNNER',
  /** A rollout or scale did not reach its goal within its bound. */
  ROLLOUT_STUCK: 'ROLLOUT_STUCK',
  /** An eviction of `pods drain` waited its whole bound for a PodDisruptionBudget to allow it. */
  DISRUPTION_BUDGET: 'DISRUPTION_BUDGET',
} as const;
export type PodRunnerReasonValue = (typeof PodRunnerReason)[keyof typeof PodRunnerReason];
