import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Metadata, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ErrorInfoSchema } from '@ledgerline/proto';
import { LedgerlineError, codeName, type CodeName } from '@ledgerline/errors';
import { RpcReason } from './errors.js';

/** The binary trailer that carries an ErrorInfo (reason and details) with every failed call. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export const ERROR_TRAILER_KEY = 'ledgerline-error-bin';

/**
 * Trailers share a small header budget with everything else (grpc-js refuses
 * metadata over 8 KiB by default), so what an error carries is bounded: a call
 * must never fail a second time because its error was too large to send.
 */
export const MAX_ERROR_MESSAGE_CHARS = 1024;
export const MAX_ERROR_DETAILS = 16;
export const MAX_ERROR_DETAIL_CHARS = 256;

/**
 * The reasons a client gives to failures that carry no ErrorInfo: they come
 * from the transport or from gRPC itself, not from a Ledgerline handler.
 */
const transportReasons: Partial<Record<CodeName, string>> = {
  UNAVAILABLE: RpcReason.TRANSPORT_UNAVAILABLE,
  DEADLINE_EXCEEDED: RpcReason.DEADLINE_EXCEEDED,
  CANCELLED: RpcReason.CANCELLED,
};

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 3)}...`;
}

function boundedDetails(details: Record<string, string>): Record<string, string> {
  const entries = Object.entries(details).slice(0, MAX_ERROR_DETAILS);
  return Object.fromEntries(
    entries.map(([key, value]) => [truncate(key, MAX_ERROR_DETAIL_CHARS), truncate(value, MAX_ERROR_DETAIL_CHARS)]),
  );
}

/** The gRPC status a server sends for an error: code, message and the ErrorInfo trailer. */
export function errorToStatus(error: LedgerlineError): StatusObject {
  const info = create(ErrorInfoSchema, { reason: error.reason, details: boundedDetails(error.details) });
  const bytes = toBinary(ErrorInfoSchema, info);
  const metadata = new Metadata();
  metadata.set(ERROR_TRAILER_KEY, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  // grpc-js percent-encodes the status message with encodeURI, which throws on a lone surrogate (a message
  // that echoes bad input can hold one): the call would never be answered. Send it well formed.
  const message = truncate(error.message, MAX_ERROR_MESSAGE_CHARS).replace(LONE_SURROGATE, '\uFFFD');
  return { code: error.grpcCode, details: message, metadata };
}

function readErrorInfo(
  metadata: Metadata | undefined,
): { reason: string; details: Record<string, string> } | undefined {
  const value = metadata?.get(ERROR_TRAILER_KEY)[0];
  if (!(value instanceof Buffer)) return undefined;
  try {
    const info = fromBinary(ErrorInfoSchema, value);
    return info.reason === '' ? undefined : { reason: info.reason, details: { ...info.details } };
  } catch {
    // A corrupt trailer must not hide the status itself: fall back to the code.
    return undefined;
  }
}

/**
 * Rebuilds the LedgerlineError a server sent, or names a transport failure
 * (no ErrorInfo trailer) by its status code.
 */
export function errorFromServiceError(serviceError: ServiceError): LedgerlineError {
  const code = codeName(serviceError.code);
  const info = readErrorInfo(serviceError.metadata);
  const message = serviceError.details || serviceError.message;
  if (info !== undefined) {
    return new LedgerlineError(code, info.reason, message, { details: info.details, cause: serviceError });
  }
  if (code === 'UNAVAILABLE' && TLS_FAILURE.test(message)) {
    return new LedgerlineError(code, RpcReason.TLS_HANDSHAKE_FAILED, tlsAdvice(message), { cause: serviceError });
  }
  if (code === 'INTERNAL' && CONNECTION_RESET.test(message)) {
    const why = `the connection was reset under the call (${message}); the call may or may not have been carried out`;
    return new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, why, { cause: serviceError });
  }
  return new LedgerlineError(code, transportReason(code, message), message, { cause: serviceError });
}

/**
 * What grpc-js says, as status INTERNAL with no ErrorInfo, of a call whose
 * HTTP/2 stream or session was reset under it (the connection closed or
 * reset while the call was open). It is a transport failure like any dropped
 * connection, so it is UNAVAILABLE, which callers retry: as INTERNAL it read
 * as a bug of the server, and a Kafka consumer whose commit failed so was
 * answered UNKNOWN_SERVER_ERROR and stopped for good.
 */
const CONNECTION_RESET = /Received RST_STREAM|Session closed with error code/;

/**
 * What OpenSSL and Node say when a handshake fails on trust rather than on the
 * network: an untrusted or expired certificate, a name mismatch, a certificate
 * the server refused, or TLS spoken to a plaintext port (and the reverse).
 */
const TLS_FAILURE =
  /certificate|altnames|alert (unknown ca|bad certificate|handshake failure|certificate required)|wrong version number|packet length too long|ERR_SSL|ERR_TLS|SSL routines/i;

function tlsAdvice(message: string): string {
  return (
    `TLS handshake failed (${message.replace(/^No connection established\. Last error: (Error: )?/, '').replace(/\. Resolution note: $/, '')}): ` +
    'check that the trusted CA (tls.ca, --tls-ca, LEDGERLINE_TLS_CA) issued the server certificate, that the ' +
    'certificate names the address dialled, that a client certificate comes from the CA the server trusts, and ' +
    'that both sides agree on TLS; retrying will not help until one of them changes'
  );
}

/**
 * gRPC itself refuses a message over the size limit before any handler runs,
 * so that status has no ErrorInfo; it still deserves a reason a person can act on.
 */
function transportReason(code: CodeName, message: string): string {
  if (code === 'RESOURCE_EXHAUSTED' && /larger than max/i.test(message)) return RpcReason.MESSAGE_TOO_LARGE;
  return transportReasons[code] ?? `GRPC_${code}`;
}

/** Turns whatever a client call failed with into a LedgerlineError. */
export function clientError(thrown: unknown): LedgerlineError {
  if (thrown instanceof LedgerlineError) return thrown;
  if (isServiceError(thrown)) return errorFromServiceError(thrown);
  return LedgerlineError.from(thrown);
}

function isServiceError(thrown: unknown): thrown is ServiceError {
  return (
    thrown instanceof Error &&
    typeof (thrown as Partial<ServiceError>).code === 'number' &&
    typeof (thrown as Partial<ServiceError>).details === 'string'
  );
}
