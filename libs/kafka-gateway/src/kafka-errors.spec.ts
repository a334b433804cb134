import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { OwnerReason } from '@ledgerline/ownership';
import { kafkaErrorOf } from './kafka-errors.js';

describe('kafkaErrorOf', () => {
  it("answers a fetch below the earliest retained offset with OFFSET_OUT_OF_RANGE, so the client's auto.offset.reset applies", () => {
    const trimmed = new LedgerlineError(
      'OUT_OF_RANGE',
      OwnerReason.OFFSET_TRIMMED,
      'offset 3 was removed by retention',
      {
        details: { earliest_offset: '10' },
      },
    );
    expect(kafkaErrorOf(trimmed)).toBe(KafkaErrorCode.OFFSET_OUT_OF_RANGE);
    // Other out-of-range failures (a ledger entry not confirmed yet) are not the client's offset to reset.
    expect(kafkaErrorOf(new LedgerlineError('OUT_OF_RANGE', ErrorReason.INTERNAL_ERROR, 'not yet'))).toBe(
      KafkaErrorCode.UNKNOWN_SERVER_ERROR,
    );
  });
});
