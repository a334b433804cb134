import { LedgerlineError } from '@ledgerline/errors';

/** Rejects payloads that are not bytes or exceed the bus's bound. */
export function checkPayload(data: Uint8Array, maxPayloadBytes: number): void {
  if (!(data instanceof Uint8Array)) {
    throw new LedgerlineError('INVALID_ARGUMENT', 'BAD_PAYLOAD', 'a bus message payload must be a Uint8Array');
  }
  if (data.byteLength > maxPayloadBytes) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      'MESSAGE_TOO_LARGE',
      `a bus message of ${data.byteLength} bytes exceeds the limit of ${maxPayloadBytes} bytes`,
      { details: { sizeBytes: String(data.byteLength), maxPayloadBytes: String(maxPayloadBytes) } },
    );
  }
}

export function busClosedError(): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', 'BUS_CLOSED', 'the bus is closed');
}
