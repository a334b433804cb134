import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { invalidArgument } from '@ledgerline/errors';
import { errorFromServiceError, errorToStatus } from './error-wire.js';
import { RpcReason } from './errors.js';

const SPEC_REASON = { INVALID_PATH: 'INVALID_PATH' } as const;

describe('errorToStatus', () => {
  it('sends a message that echoes a lone surrogate in a form grpc-js can percent-encode', () => {
    const status = errorToStatus(invalidArgument(SPEC_REASON.INVALID_PATH, 'bad path /a\ud800b'));
    expect(() => encodeURI(status.details!)).not.toThrow();
    expect(status.details).toBe('bad path /a\ufffdb');
  });
});

/** A failure as grpc-js hands it to a client: code, message, trailers. */
function serviceError(code: status, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(`${code} ${details}`), { code, details, metadata });
}

describe('errorFromServiceError', () => {
  it('takes a call whose HTTP/2 stream or session was reset under it for a transport failure, which callers retry', () => {
    for (const details of [
      'Received RST_STREAM with code 2 triggered by internal client error: Session closed with error code 2',
      'Received RST_STREAM with code 2 (Internal server error)',
    ]) {
      const error = errorFromServiceError(serviceError(status.INTERNAL, details));
      expect({ code: error.code, reason: error.reason }).toEqual({
        code: 'UNAVAILABLE',
        reason: RpcReason.TRANSPORT_UNAVAILABLE,
      });
      expect(error.message).toContain(details);
    }
  });

  it('keeps INTERNAL for any other failure, and whatever a server said in its ErrorInfo', () => {
    const other = errorFromServiceError(serviceError(status.INTERNAL, 'Failed to parse server response'));
    expect({ code: other.code, reason: other.reason }).toEqual({ code: 'INTERNAL', reason: 'GRPC_INTERNAL' });
    const sent = errorToStatus(invalidArgument(SPEC_REASON.INVALID_PATH, 'Received RST_STREAM, says the path'));
    const told = errorFromServiceError(serviceError(status.INTERNAL, sent.details!, sent.metadata));
    expect({ code: told.code, reason: told.reason }).toEqual({ code: 'INTERNAL', reason: SPEC_REASON.INVALID_PATH });
  });
});
