import { create, toBinary } from '@bufbuild/protobuf';
import { MessageMetadataSchema, SingleMessageMetadataSchema } from '@ledgerline/proto';
import {
  writeMessageMetadata,
  writeSingleMessageMetadata,
  type MessageMetadataFields,
  type SingleMessageMetadataFields,
} from './metadata-writer.js';

// Strings that take 1, 2, 3 and 4 UTF-8 bytes per character, an empty one, and a lone surrogate.
const STRINGS = ['', 'p', 'producer-1', 'naïve', '日本語', '🎉x', 'a\ud800b', 'k'.repeat(200)];
const BIG = [0n, 1n, 127n, 128n, 16_383n, 16_384n, 2n ** 31n - 1n, 2n ** 31n, 1_700_000_000_123n, 2n ** 63n - 1n];

function* metadataCases(): Generator<MessageMetadataFields> {
  for (const [i, producerName] of STRINGS.entries()) {
    for (const [j, sequenceId] of BIG.entries()) {
      const fields: MessageMetadataFields = {
        producerName,
        sequenceId,
        publishTime: BIG[(i + j) % BIG.length]!,
        properties:
          j % 3 === 0
            ? []
            : [
                { key: STRINGS[j % STRINGS.length]!, value: STRINGS[i]! },
                { key: 'b', value: '' },
              ],
      };
      if (j % 2 === 1) fields.partitionKey = STRINGS[(i + 1) % STRINGS.length]!;
      if (j % 4 === 2) fields.eventTime = BIG[j]!;
      if (j % 5 === 3) fields.numMessagesInBatch = [1, 100, 100_000][i % 3]!;
      if (j % 5 === 3 && i % 2 === 0) fields.highestSequenceId = sequenceId + 99n;
      yield fields;
    }
  }
}

function* singleCases(): Generator<SingleMessageMetadataFields> {
  for (const [i, key] of STRINGS.entries()) {
    for (const [j, sequenceId] of BIG.entries()) {
      const fields: SingleMessageMetadataFields = {
        properties: j % 2 === 0 ? [] : [{ key, value: STRINGS[j % STRINGS.length]! }],
        payloadSize: [0, 1, 127, 128, 1024, 5 * 1024 * 1024][(i + j) % 6]!,
        sequenceId,
      };
      if (i % 2 === 1) fields.partitionKey = key;
      if (j % 3 === 1) fields.eventTime = BIG[(i + j) % BIG.length]!;
      yield fields;
    }
  }
}

describe('hand-written metadata writers', () => {
  it('write MessageMetadata exactly as protobuf-es does', () => {
    let cases = 0;
    for (const fields of metadataCases()) {
      const expected = toBinary(
        MessageMetadataSchema,
        create(MessageMetadataSchema, { ...fields, properties: [...fields.properties] }),
      );
      expect(Buffer.from(writeMessageMetadata(fields)).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
      cases++;
    }
    expect(cases).toBe(STRINGS.length * BIG.length);
  });

  it('write SingleMessageMetadata exactly as protobuf-es does', () => {
    let cases = 0;
    for (const fields of singleCases()) {
      const expected = toBinary(
        SingleMessageMetadataSchema,
        create(SingleMessageMetadataSchema, { ...fields, properties: [...fields.properties] }),
      );
      expect(Buffer.from(writeSingleMessageMetadata(fields)).toString('hex')).toBe(
        Buffer.from(expected).toString('hex'),
      );
      cases++;
    }
    expect(cases).toBe(STRINGS.length * BIG.length);
  });
});
