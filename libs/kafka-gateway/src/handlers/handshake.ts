import { randomInt } from 'node:crypto';
import { KafkaErrorCode, supportedApiVersions, type DecodedRequest, type Message } from '@ledgerline/kafka-protocol';
import { LedgerlineError } from '@ledgerline/errors';
import type { GatewayContext } from '../gateway-context.js';
import { errorMessageOf } from '../kafka-errors.js';
import type { Session } from '../session.js';

const PLAIN = 'PLAIN';
/** KoP's convention: a SASL/PLAIN password `token:<jwt>` carries a Ledgerline token. */
const TOKEN_PREFIX = 'token:';

export async function handleApiVersions(): Promise<Message> {
  return { errorCode: KafkaErrorCode.NONE, apiKeys: supportedApiVersions(), throttleTimeMs: 0 };
}

/** The ApiVersions answer to a version this gateway does not serve: v0 layout, UNSUPPORTED_VERSION, and the table (KIP-511). */
export function unsupportedApiVersionsBody(): Message {
  return { errorCode: KafkaErrorCode.UNSUPPORTED_VERSION, apiKeys: supportedApiVersions(), throttleTimeMs: 0 };
}

export async function handleSaslHandshake(
  _context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const mechanism = request.body['mechanism'] as string;
  if (mechanism !== PLAIN) return { errorCode: KafkaErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: [PLAIN] };
  session.saslMechanism = mechanism;
  return { errorCode: KafkaErrorCode.NONE, mechanisms: [PLAIN] };
}

function authenticationFailed(session: Session, errorCode: number, errorMessage: string): Message {
  // A Kafka broker closes the connection after a failed authentication; the client sees the answer first.
  session.closeAfterAnswer = true;
  return { errorCode, errorMessage, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
}

/**
 * SaslAuthenticate v0-1 with PLAIN (authzid NUL authcid NUL password): a
 * `token:<jwt>` password becomes the bearer token of this connection's calls
 * to Ledgerline, whose services check it as they check the SDK's. When the
 * gateway requires authentication the token is checked here too, so a bad
 * one fails the login (SASL_AUTHENTICATION_FAILED) instead of each request.
 * A failed exchange closes the connection once answered.
 */
export async function handleSaslAuthenticate(
  context: GatewayContext,
  request: DecodedRequest,
  session: Session,
): Promise<Message> {
  const failed = (errorMessage: string): Message =>
    authenticationFailed(session, KafkaErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage);
  if (session.saslMechanism !== PLAIN) {
    return authenticationFailed(session, KafkaErrorCode.ILLEGAL_SASL_STATE, 'SaslHandshake must come first');
  }
  const parts = (request.body['authBytes'] as Buffer).toString('utf8').split('\u0000');
  if (parts.length !== 3) return failed('PLAIN wants authzid, authcid and password separated by NUL');
  const password = parts[2] as string;
  const token = password.startsWith(TOKEN_PREFIX) ? password.slice(TOKEN_PREFIX.length) : undefined;
  if (context.authentication !== undefined) {
    if (token === undefined) return failed(`this gateway requires a token: send the password ${TOKEN_PREFIX}<jwt>`);
    try {
      await context.authentication.verify(token);
    } catch (error) {
      const reason = error instanceof LedgerlineError ? error.reason : undefined;
      context.logger.warn({ client: session.clientHost, reason }, 'kafka SASL authentication failed');
      return failed(`the token was refused: ${errorMessageOf(error)}`);
    }
  }
  session.caller = { token };
  session.authenticated = true;
  return { errorCode: KafkaErrorCode.NONE, errorMessage: null, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
}

/**
 * InitProducerId v0-1 for idempotent producers: an id no other producer got
 * (milliseconds since the epoch in the high bits, randomness below), epoch 0.
 * Transactional producers are refused as FindCoordinator refuses their
 * transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, final for every
 * Kafka client (transactions are not served yet).
 */
export async function handleInitProducerId(_context: GatewayContext, request: DecodedRequest): Promise<Message> {
  if (request.body['transactionalId'] !== null) {
    return {
      throttleTimeMs: 0,
      errorCode: KafkaErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      producerId: -1n,
      producerEpoch: -1,
    };
  }
  const producerId = (BigInt(Date.now()) << 20n) | BigInt(randomInt(1 << 20));
  return { throttleTimeMs: 0, errorCode: KafkaErrorCode.NONE, producerId, producerEpoch: 0 };
}
