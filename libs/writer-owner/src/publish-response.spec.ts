import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { PublishResponseSchema } from '@ledgerline/proto';
import fc from 'fast-check';
import { encodePublishResponse, type PublishOutcome } from './publish-response.js';
import { failureMessage, receiptMessage } from './publish-mapping.js';

const int64 = fc.integer({ min: -1, max: Number.MAX_SAFE_INTEGER });
const receipt = fc.record({
  sequenceId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  position: fc.option(fc.record({ ledgerId: int64, entryId: int64 }), { nil: undefined }),
  firstOffset: int64,
  lastOffset: int64,
  duplicate: fc.boolean(),
  publishTimeMs: int64,
});
const failure = fc.record({
  sequenceId: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  reason: fc.constantFrom('MESSAGE_TOO_LARGE', 'NOT_OWNER', 'TOPIC_UNLOADED'),
  message: fc.string(),
});
const outcome: fc.Arbitrary<PublishOutcome> = fc.oneof(
  receipt.map((value) => ({ receipt: value })),
  failure.map(({ sequenceId, reason, message }) => ({
    failure: failureMessage(
      sequenceId,
      new LedgerlineError('RESOURCE_EXHAUSTED', reason, message, { details: { topic: 't' } }),
    ),
  })),
);

/** The same response built as objects and encoded by reflection. */
function byReflection(outcomes: PublishOutcome[], maxMessagesPerRequest: number) {
  const result = (each: PublishOutcome) =>
    each.receipt !== undefined
      ? { case: 'receipt' as const, value: receiptMessage(each.receipt) }
      : { case: 'failure' as const, value: each.failure };
  return create(PublishResponseSchema, {
    result: result(outcomes[0]!),
    more: outcomes.slice(1).map((each) => ({ result: result(each) })),
    maxMessagesPerRequest,
  });
}

describe('hand-encoded PublishResponse', () => {
  it('decodes to the response encoding by reflection gives, and to the same bytes', () => {
    fc.assert(
      fc.property(
        fc.array(outcome, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 10_000 }),
        (outcomes, max) => {
          const encoded = encodePublishResponse(outcomes, max);
          expect(encoded.schema).toBe(PublishResponseSchema);
          const expected = byReflection(outcomes, max);
          expect(equals(PublishResponseSchema, fromBinary(PublishResponseSchema, encoded.bytes), expected)).toBe(true);
          expect(encoded.bytes).toEqual(toBinary(PublishResponseSchema, expected));
        },
      ),
      { numRuns: 300 },
    );
  });
});
