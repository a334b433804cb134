import { BinaryReader } from '@bufbuild/protobuf/wire';
import { Code, ConnectError } from '@connectrpc/connect';

/** What the console shows of a failed call: the status, the stable reason, the message. */
export interface CallError {
  readonly code: string;
  readonly reason: string;
  readonly message: string;
  readonly unauthenticated: boolean;
}

/**
 * The services put the stable reason (docs/errors.md) in a google.rpc.ErrorInfo
 * detail. Its field 1 is the reason; reading that one string needs no schema.
 */
function errorInfoReason(error: ConnectError): string {
  for (const detail of error.details) {
    if (!('type' in detail) || detail.type !== 'google.rpc.ErrorInfo' || !(detail.value instanceof Uint8Array))
      continue;
    const reader = new BinaryReader(detail.value);
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag();
      if (field === 1) return reader.string();
      reader.skip(wireType);
    }
  }
  return '';
}

export function toCallError(thrown: unknown): CallError {
  const error = ConnectError.from(thrown);
  return {
    code: Code[error.code] ?? String(error.code),
    reason: errorInfoReason(error),
    message: error.rawMessage,
    unauthenticated: error.code === Code.Unauthenticated,
  };
}
