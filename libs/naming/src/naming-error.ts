import { invalidArgument, type LedgerlineError } from '@ledgerline/errors';

/** The stable reasons this package puts on its INVALID_ARGUMENT errors. */
export const NamingErrorReason = {
  INVALID_TOPIC_NAME: 'INVALID_TOPIC_NAME',
  INVALID_NAMESPACE_NAME: 'INVALID_NAMESPACE_NAME',
  INVALID_TENANT_NAME: 'INVALID_TENANT_NAME',
  INVALID_BUCKET_COUNT: 'INVALID_BUCKET_COUNT',
  INVALID_BUCKET: 'INVALID_BUCKET',
  INVALID_PARTITION_INDEX: 'INVALID_PARTITION_INDEX',
  INVALID_ENCODED_NAME: 'INVALID_ENCODED_NAME',
  INVALID_PERSISTENCE_NAME: 'INVALID_PERSISTENCE_NAME',
} as const;

export type NamingErrorReasonName = keyof typeof NamingErrorReason;

// Messages quote the offending input, but never more than this much of it, so
// a megabyte of garbage does not end up in a log line or a gRPC trailer.
const MAX_QUOTED_LENGTH = 120;

/** The input as it appears in a message: JSON-quoted and cut to a readable length. */
export function quote(value: unknown): string {
  if (typeof value !== 'string') return `a ${value === null ? 'null' : typeof value}`;
  const cut = value.length > MAX_QUOTED_LENGTH ? `${value.slice(0, MAX_QUOTED_LENGTH)}...` : value;
  return JSON.stringify(cut);
}

/** An INVALID_ARGUMENT error with one of this package's reasons. */
export function namingError(reason: NamingErrorReasonName, message: string): LedgerlineError {
  return invalidArgument(reason, message);
}
