import { Compression, type KafkaRecord, type RecordBatch } from '@ledgerline/kafka-protocol';
import { kafkaErrorOf } from './kafka-errors.js';
import { GatewayReason } from './reasons.js';
import { storedMessage, TIMESTAMP_PROPERTY } from './record-mapping.js';

function batchAt(baseTimestamp: bigint): RecordBatch {
  return {
    baseOffset: 0n,
    partitionLeaderEpoch: 0,
    compression: Compression.NONE,
    timestampType: 0,
    transactional: false,
    control: false,
    lastOffsetDelta: 0,
    baseTimestamp,
    maxTimestamp: baseTimestamp,
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    records: [],
  };
}

const record = (timestampDelta = 0n): KafkaRecord => ({
  offsetDelta: 0,
  timestampDelta,
  key: null,
  value: Buffer.from('v'),
  headers: [],
});

describe('storedMessage timestamps', () => {
  it('stores a time as event time, and -1 (none) and 0, which event time cannot hold, as a property', () => {
    expect(storedMessage(batchAt(1_700_000_000_000n), record(5n))).toMatchObject({
      eventTimeMs: 1_700_000_000_005n,
      properties: {},
    });
    expect(storedMessage(batchAt(-1n), record())).toMatchObject({
      eventTimeMs: 0n,
      properties: { [TIMESTAMP_PROPERTY]: '-1' },
    });
    expect(storedMessage(batchAt(-1n), record(1n))).toMatchObject({
      eventTimeMs: 0n,
      properties: { [TIMESTAMP_PROPERTY]: '0' },
    });
  });

  it("refuses other negative times and times past event time's range with INVALID_TIMESTAMP", () => {
    for (const [base, delta] of [
      [-2n, 0n],
      [-1n, -5n],
      [BigInt(Number.MAX_SAFE_INTEGER), 1n],
    ] as const) {
      let thrown: unknown;
      try {
        storedMessage(batchAt(base), record(delta));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ reason: GatewayReason.INVALID_KAFKA_TIMESTAMP });
      expect(kafkaErrorOf(thrown)).toBe(32);
    }
  });
});
