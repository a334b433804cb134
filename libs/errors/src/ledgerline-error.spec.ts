import { Code, LedgerlineError, codeName, invalidArgument } from './ledgerline-error.js';
import { ErrorReason } from './error-reason.js';

// Reasons for these tests: this package depends on nothing, so the reasons other packages own are spelled here.
const SPEC_REASON = {
  BAD_NAME: 'BAD_NAME',
  WEIRD: 'WEIRD',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  ENTRY_TOO_LARGE: 'ENTRY_TOO_LARGE',
  LEDGER_FENCED: 'LEDGER_FENCED',
} as const;

describe('LedgerlineError', () => {
  it('keeps code, reason, details and cause', () => {
    const cause = new Error('disk');
    const error = new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, 'version 3 expected, found 4', {
      details: { path: '/a' },
      cause,
    });
    expect(error.code).toBe('ABORTED');
    expect(error.grpcCode).toBe(Code.ABORTED);
    expect(error.reason).toBe('BAD_VERSION');
    expect(error.details).toEqual({ path: '/a' });
    expect(error.cause).toBe(cause);
    expect(error.toString()).toBe('ABORTED BAD_VERSION: version 3 expected, found 4');
    expect(error).toBeInstanceOf(Error);
  });

  it('from() keeps a LedgerlineError as it is', () => {
    const error = invalidArgument(SPEC_REASON.BAD_NAME, 'empty tenant');
    expect(LedgerlineError.from(error)).toBe(error);
  });

  it('from() maps a gRPC service error by its status code', () => {
    const serviceError = Object.assign(new Error('14 UNAVAILABLE: no connection'), {
      code: Code.UNAVAILABLE,
      details: 'no connection',
    });
    const error = LedgerlineError.from(serviceError);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe('no connection');
    expect(error.retryable).toBe(true);
  });

  it('counts only transient codes as retryable', () => {
    expect(new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'down').retryable).toBe(true);
    expect(new LedgerlineError('DEADLINE_EXCEEDED', SPEC_REASON.DEADLINE_EXCEEDED, 'slow').retryable).toBe(true);
    expect(new LedgerlineError('RESOURCE_EXHAUSTED', SPEC_REASON.ENTRY_TOO_LARGE, 'too big').retryable).toBe(false);
    expect(new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, 'conflict').retryable).toBe(false);
  });

  it('from() turns anything else into INTERNAL', () => {
    expect(LedgerlineError.from(new TypeError('x')).code).toBe('INTERNAL');
    const fromString = LedgerlineError.from('boom', SPEC_REASON.WEIRD);
    expect(fromString.code).toBe('INTERNAL');
    expect(fromString.reason).toBe('WEIRD');
    expect(fromString.message).toBe('boom');
  });

  it('names unknown numeric codes UNKNOWN', () => {
    expect(codeName(99)).toBe('UNKNOWN');
    expect(codeName(Code.NOT_FOUND)).toBe('NOT_FOUND');
  });

  it('is() matches on the reason', () => {
    const error = new LedgerlineError('ABORTED', SPEC_REASON.LEDGER_FENCED, 'fenced');
    expect(LedgerlineError.is(error, SPEC_REASON.LEDGER_FENCED)).toBe(true);
    expect(LedgerlineError.is(error, ErrorReason.BAD_VERSION)).toBe(false);
    expect(LedgerlineError.is(new Error('x'), SPEC_REASON.LEDGER_FENCED)).toBe(false);
  });
});
