import { ApiKey, apiSpec, type DecodedRequest } from '@ledgerline/kafka-protocol';

/**
 * A Fetch v11 of topic `orders` at `fetchOffset` of each partition given, waiting up to 20 s: the owners here have
 * no clock, so only an appended entry answers a long poll.
 */
export function fetchRequest(partitions: number[], fetchOffset = 0n): DecodedRequest {
  const body = {
    replicaId: -1,
    maxWaitMs: 20_000,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [
      {
        name: 'orders',
        partitions: partitions.map((partitionIndex) => ({
          partitionIndex,
          currentLeaderEpoch: -1,
          fetchOffset,
          logStartOffset: -1n,
          partitionMaxBytes: 1 << 20,
        })),
      },
    ],
    forgottenTopicsData: [],
    rackId: '',
  };
  return {
    header: { apiKey: ApiKey.Fetch, apiVersion: 11, correlationId: 1, clientId: 'spec' },
    spec: apiSpec(ApiKey.Fetch)!,
    body,
  };
}
