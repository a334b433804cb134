import { LedgerlineError } from '@ledgerline/errors';

/** The stable reasons event bus calls fail with; programs branch on these. */
export const BusReason = {
  BAD_BUFFER_SIZE: 'BAD_BUFFER_SIZE',
  /** A ledger id in a subject that is not a non-negative safe integer. */
  BAD_LEDGER_ID: 'BAD_LEDGER_ID',
  BAD_MANAGED_LEDGER_NAME: 'BAD_MANAGED_LEDGER_NAME',
  BAD_NOTIFICATION: 'BAD_NOTIFICATION',
  /** A metadata path in a subject that is not absolute. */
  BAD_PATH: 'BAD_PATH',
  BAD_OVERFLOW_POLICY: 'BAD_OVERFLOW_POLICY',
  BAD_PAYLOAD: 'BAD_PAYLOAD',
  BAD_SUBJECT: 'BAD_SUBJECT',
  BUS_CLOSED: 'BUS_CLOSED',
  BUS_UNAVAILABLE: 'BUS_UNAVAILABLE',
  MESSAGE_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  SUBJECT_TOO_LONG: 'SUBJECT_TOO_LONG',
  TOO_MANY_LEDGERS: 'TOO_MANY_LEDGERS',
  TOO_MANY_SUBSCRIPTIONS: 'TOO_MANY_SUBSCRIPTIONS',
} as const;

/** Rejects payloads that are not bytes or exceed the bus's bound. */
export function checkPayload(data: Uint8Array, maxPayloadBytes: number): void {
  if (!(data instanceof Uint8Array)) {
    throw new LedgerlineError('INVALID_ARGUMENT', BusReason.BAD_PAYLOAD, 'a bus message payload must be a Uint8Array');
  }
  if (data.byteLength > maxPayloadBytes) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      BusReason.MESSAGE_TOO_LARGE,
      `a bus message of ${data.byteLength} bytes exceeds the limit of ${maxPayloadBytes} bytes`,
      { details: { sizeBytes: String(data.byteLength), maxPayloadBytes: String(maxPayloadBytes) } },
    );
  }
}

export function busClosedError(): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', BusReason.BUS_CLOSED, 'the bus is closed');
}
