import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorInfoSchema } from '@gen/common_pb';

/** What the console shows of a failed call: the status, the stable reason, the message. */
export interface CallError {
  readonly code: string;
  readonly reason: string;
  readonly message: string;
  readonly unauthenticated: boolean;
}

export function toCallError(thrown: unknown): CallError {
  const error = ConnectError.from(thrown);
  return {
    code: Code[error.code] ?? String(error.code),
    // The stable reason (docs/errors.md), from the ErrorInfo detail the console server attaches.
    reason: error.findDetails(ErrorInfoSchema)[0]?.reason ?? '',
    message: error.rawMessage,
    unauthenticated: error.code === Code.Unauthenticated,
  };
}
