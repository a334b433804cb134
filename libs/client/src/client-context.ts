import type { LedgerlineError } from '@ledgerline/errors';
import type { CallOptions } from '@ledgerline/rpc';
import { withReconnect, type ReconnectPolicy } from './reconnect.js';
import type { ServiceClients, ServiceConnections } from './service-connections.js';
import type { TopicLookup } from './topic-lookup.js';

/** What producers, consumers and readers share with the client that made them. */
export interface ClientContext {
  readonly connections: ServiceConnections;
  readonly lookup: TopicLookup;
  readonly reconnect: ReconnectPolicy;
  readonly operationTimeoutMs: number;
  /** The owner group lookups go through ('' for the topic's own). */
  readonly group: string;
  /** CLIENT_CLOSED once the client is closed, else undefined. */
  closedError(): LedgerlineError | undefined;
}

/** The name of partition `index` of `topic`, or the topic itself when it is not partitioned. */
export function partitionTopic(topic: string, partitions: number, index: number): string {
  return partitions === 0 ? topic : `${topic}-partition-${index}`;
}

/**
 * A unary call to the owner of `topic`, re-routed and retried on NOT_OWNER,
 * TOPIC_UNLOADED and lost connections within the client's reconnect bound.
 */
export function callOwner<T>(
  context: ClientContext,
  topic: string,
  stopped: () => LedgerlineError | undefined,
  call: (clients: ServiceClients, options: CallOptions) => Promise<T>,
): Promise<T> {
  return withReconnect(context.reconnect, topic, context.lookup, stopped, async () => {
    const route = await context.lookup.route(topic);
    return call(context.connections.to(route.address), context.connections.callOptions(context.operationTimeoutMs));
  });
}
