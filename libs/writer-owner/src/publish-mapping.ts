import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { positionMessage } from '@ledgerline/ownership';
import type { PublishFailureSchema, PublishReceiptSchema } from '@ledgerline/proto';
import type { Receipt } from './receipts.js';

export function receiptMessage(receipt: Receipt): MessageInitShape<typeof PublishReceiptSchema> {
  return {
    sequenceId: receipt.sequenceId,
    ...(receipt.position === undefined ? {} : { position: positionMessage(receipt.position) }),
    firstOffset: BigInt(receipt.firstOffset),
    lastOffset: BigInt(receipt.lastOffset),
    duplicate: receipt.duplicate,
    publishTimeMs: BigInt(receipt.publishTimeMs),
  };
}

export function failureMessage(sequenceId: bigint, thrown: unknown): MessageInitShape<typeof PublishFailureSchema> {
  const error = LedgerlineError.from(thrown);
  return { sequenceId, code: error.grpcCode, reason: error.reason, message: error.message, details: error.details };
}
