/** Why a local cluster could not do what was asked. */
export const ClusterReason = {
  /** No Ledgerline checkout was found to run the services from. */
  NO_WORKSPACE: 'NO_WORKSPACE',
  /** A service was asked for whose app this checkout does not hold. */
  APP_MISSING: 'APP_MISSING',
  /** A server or service did not start, or did not become healthy within its bound. */
  START_FAILED: 'START_FAILED',
  /** The cluster description file is missing or unreadable. */
  NO_CLUSTER: 'NO_CLUSTER',
  /** A count or option of `cluster up` is out of range. */
  BAD_CLUSTER_OPTION: 'BAD_CLUSTER_OPTION',
} as const;
export type ClusterReasonValue = (typeof ClusterReason)[keyof typeof ClusterReason];
