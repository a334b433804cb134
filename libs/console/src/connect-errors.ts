import { Code as ConnectCode, ConnectError, type Interceptor } from '@connectrpc/connect';
import { Code, LedgerlineError } from '@ledgerline/errors';
import { ErrorInfoSchema } from '@ledgerline/proto';

/**
 * A failure as a browser gets it: a Connect error whose code is the gRPC
 * status code of the refusal (Connect's codes are gRPC's, number for number)
 * and whose ErrorInfo detail carries the stable reason and its details, as the
 * `ledgerline-error-bin` trailer does for gRPC clients.
 */
export function toConnectError(thrown: unknown): ConnectError {
  if (thrown instanceof ConnectError) return thrown;
  const error = LedgerlineError.from(thrown);
  return new ConnectError(
    `${error.reason}: ${error.message}`,
    Code[error.code] as number as ConnectCode,
    undefined,
    [{ desc: ErrorInfoSchema, value: { reason: error.reason, details: error.details } }],
    error,
  );
}

/** Turns whatever a handler throws into toConnectError's form, and reports the ones that are our bugs. */
export function errorInterceptor(onInternal: (error: LedgerlineError, procedure: string) => void): Interceptor {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (thrown) {
      const error = toConnectError(thrown);
      if (error.code === ConnectCode.Internal || error.code === ConnectCode.Unknown) {
        onInternal(LedgerlineError.from(thrown), request.method.name);
      }
      throw error;
    }
  };
}
