import type { DecodedRequest, Message } from '@ledgerline/kafka-protocol';
import type { GatewayContext } from './gateway-context.js';
import type { Caller } from './owner-router.js';

/** One client connection's state: who it is, and whether its SASL exchange is done. */
export interface Session {
  caller: Caller;
  readonly clientHost: string;
  saslMechanism: string | undefined;
}

/** A Kafka API's handler: the response body, or undefined for a request that gets none (Produce with acks 0). */
export type ApiHandler = (
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
) => Promise<Message | undefined>;
