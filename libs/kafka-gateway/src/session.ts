import type { DecodedRequest, Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from './gateway-context.js';
import { IssueOrder } from './issue-order.js';
import type { Caller } from './owner-router.js';

/** One client connection's state: who it is, and whether its SASL exchange is done. */
export interface Session {
  caller: Caller;
  readonly clientHost: string;
  saslMechanism: string | undefined;
  /** A SaslAuthenticate succeeded: with authentication required, only then may other requests come. */
  authenticated: boolean;
  /** The answer being sent is the last: the connection closes once it is written (a failed SaslAuthenticate). */
  closeAfterAnswer: boolean;
  /** Produce requests' batches reach their partition's owner in the order the requests arrived. */
  readonly produceOrder: IssueOrder;
  /**
   * The end (next offset) of each partition this connection last fetched, by Kafka topic and partition: a
   * fetch at or before it is a consumer tailing, whose owner may wait in the first call (handlers/fetch.ts).
   * At most MAX_REMEMBERED_FETCH_ENDS, the oldest forgotten first.
   */
  readonly fetchEnds: Map<string, bigint>;
}

/** Partitions whose end a connection remembers: a consumer fetches the partitions assigned to it, far fewer. */
export const MAX_REMEMBERED_FETCH_ENDS = 4_096;

/** The state of a connection that has just opened. */
export function newSession(caller: Caller, clientHost: string): Session {
  return {
    caller,
    clientHost,
    saslMechanism: undefined,
    authenticated: false,
    closeAfterAnswer: false,
    produceOrder: new IssueOrder(),
    fetchEnds: new Map(),
  };
}

/** A Kafka API's handler: the response body, or undefined for a request that gets none (Produce with acks 0). */
export type ApiHandler = (
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
) => Promise<Message | undefined>;
