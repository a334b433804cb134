import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { PublishFailureSchema, PublishResponseSchema } from '@ledgerline/proto';
import { EncodedMessage } from '@ledgerline/rpc';
import type { Receipt } from './receipts.js';

/** One entry's answer: its receipt, or why it was not stored. */
export type PublishOutcome =
  | { receipt: Receipt; failure?: undefined }
  | { receipt?: undefined; failure: MessageInitShape<typeof PublishFailureSchema> };

/**
 * The PublishResponse answering one request's entries (the first as `result`,
 * the rest as `more`), encoded by hand: a response is sent for every request on
 * the hottest path of the owner, and building it as objects for reflection to
 * encode cost more than storing the entry. Receipts are written field by field
 * in field-number order, leaving out zero values as proto3 does; failures
 * (rare) go through the generated schema. Decodes to exactly what encoding
 * the same response from objects gives (publish-response.spec.ts).
 */
export function encodePublishResponse(
  outcomes: readonly PublishOutcome[],
  maxMessagesPerRequest: number,
): EncodedMessage<typeof PublishResponseSchema> {
  const writer = new BinaryWriter();
  writeOutcome(writer, outcomes[0]!);
  for (let index = 1; index < outcomes.length; index++) {
    writer.tag(3, WireType.LengthDelimited).fork();
    writeOutcome(writer, outcomes[index]!);
    writer.join();
  }
  if (maxMessagesPerRequest !== 0) writer.tag(4, WireType.Varint).uint32(maxMessagesPerRequest);
  return new EncodedMessage(PublishResponseSchema, writer.finish());
}

/** The oneof of PublishResponse and PublishResult alike: receipt = 1, failure = 2. */
function writeOutcome(writer: BinaryWriter, outcome: PublishOutcome): void {
  if (outcome.receipt !== undefined) {
    writer.tag(1, WireType.LengthDelimited).fork();
    writeReceipt(writer, outcome.receipt);
    writer.join();
    return;
  }
  const failure = toBinary(PublishFailureSchema, create(PublishFailureSchema, outcome.failure));
  writer.tag(2, WireType.LengthDelimited).bytes(failure);
}

function writeReceipt(writer: BinaryWriter, receipt: Receipt): void {
  if (receipt.sequenceId !== 0n) writer.tag(1, WireType.Varint).uint64(receipt.sequenceId);
  const position = receipt.position;
  if (position !== undefined) {
    writer.tag(2, WireType.LengthDelimited).fork();
    if (position.ledgerId !== 0) writer.tag(1, WireType.Varint).int64(position.ledgerId);
    if (position.entryId !== 0) writer.tag(2, WireType.Varint).int64(position.entryId);
    writer.join();
  }
  if (receipt.firstOffset !== 0) writer.tag(3, WireType.Varint).int64(receipt.firstOffset);
  if (receipt.lastOffset !== 0) writer.tag(4, WireType.Varint).int64(receipt.lastOffset);
  if (receipt.duplicate) writer.tag(5, WireType.Varint).bool(true);
  if (receipt.publishTimeMs !== 0) writer.tag(6, WireType.Varint).int64(receipt.publishTimeMs);
}
