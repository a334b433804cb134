import { ErrorReason } from './error-reason.js';

/**
 * The closed set of error codes: the gRPC status codes, by name, with their
 * wire numbers spelled out here so this package loads no transport. A code says
 * what kind of failure it is and whether retrying can help; the reason says
 * which failure it is.
 */
export const Code = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

export type CodeName = keyof typeof Code;
export type CodeValue = (typeof Code)[CodeName];

const codeNames = new Map<number, CodeName>(Object.entries(Code).map(([name, value]) => [value, name as CodeName]));

/** The name of a numeric gRPC status code, or UNKNOWN for anything else. */
export function codeName(code: number): CodeName {
  return codeNames.get(code) ?? 'UNKNOWN';
}

export interface LedgerlineErrorOptions {
  details?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type of the whole system. `code` is a gRPC status code name;
 * `reason` is a stable UPPER_SNAKE identifier a program can branch on
 * (`BAD_VERSION`, `LEDGER_FENCED`, `BUCKETS_IMMUTABLE`, ...); `message` is for
 * people. Both code and reason travel over the wire and are rebuilt on the client.
 */
export class LedgerlineError extends Error {
  override readonly name = 'LedgerlineError';
  readonly code: CodeName;
  readonly reason: string;
  readonly details: Record<string, string>;

  constructor(code: CodeName, reason: string, message: string, options: LedgerlineErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.reason = reason;
    this.details = options.details ?? {};
  }

  /** The numeric gRPC status code. */
  get grpcCode(): CodeValue {
    return Code[this.code];
  }

  /**
   * True for failures a caller may retry as they are (a store down, a
   * deadline). RESOURCE_EXHAUSTED is not among them: most of ours are size
   * limits, which the same request will hit again.
   */
  get retryable(): boolean {
    return this.code === 'UNAVAILABLE' || this.code === 'DEADLINE_EXCEEDED';
  }

  override toString(): string {
    return `${this.code} ${this.reason}: ${this.message}`;
  }

  /**
   * Turns anything thrown into a LedgerlineError: a LedgerlineError is kept as
   * it is, a gRPC ServiceError keeps its status code, anything else becomes
   * INTERNAL with the original as its cause.
   */
  static from(thrown: unknown, fallbackReason: string = ErrorReason.INTERNAL_ERROR): LedgerlineError {
    if (thrown instanceof LedgerlineError) return thrown;
    if (isServiceErrorLike(thrown)) {
      return new LedgerlineError(codeName(thrown.code), fallbackReason, thrown.details || thrown.message, {
        cause: thrown,
      });
    }
    if (thrown instanceof Error) {
      return new LedgerlineError('INTERNAL', fallbackReason, thrown.message, { cause: thrown });
    }
    return new LedgerlineError('INTERNAL', fallbackReason, String(thrown), { cause: thrown });
  }

  /** True when `thrown` is a LedgerlineError with this reason. */
  static is(thrown: unknown, reason: string): thrown is LedgerlineError {
    return thrown instanceof LedgerlineError && thrown.reason === reason;
  }
}

interface ServiceErrorLike {
  code: number;
  details: string;
  message: string;
}

function isServiceErrorLike(thrown: unknown): thrown is ServiceErrorLike {
  return (
    typeof thrown === 'object' &&
    thrown !== null &&
    typeof (thrown as { code?: unknown }).code === 'number' &&
    typeof (thrown as { details?: unknown }).details === 'string'
  );
}

/** Shorthand for the most common failure: bad input from outside. */
export function invalidArgument(reason: string, message: string, details?: Record<string, string>): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', reason, message, details === undefined ? {} : { details });
}
