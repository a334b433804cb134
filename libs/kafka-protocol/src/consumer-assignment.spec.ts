import { ByteWriter } from './byte-writer.js';
import { decodeConsumerAssignment } from './consumer-assignment.js';

/** A ConsumerProtocol Assignment as Kafka's clients encode it (version 1, no user data). */
function assignment(topics: { topic: string; partitions: number[] }[]): Buffer {
  const writer = new ByteWriter().int16(1).int32(topics.length);
  for (const { topic, partitions } of topics) {
    writer.string(topic, false).int32(partitions.length);
    for (const partition of partitions) writer.int32(partition);
  }
  return writer.int32(-1).finish();
}

describe('decodeConsumerAssignment', () => {
  it("reads a consumer's topics and partitions", () => {
    const topics = [
      { topic: 'orders', partitions: [0, 2] },
      { topic: 'clicks', partitions: [1] },
    ];
    expect(decodeConsumerAssignment(assignment(topics))).toEqual(topics);
  });

  it('gives what it could read of bytes of another protocol or cut short, never throwing', () => {
    const whole = assignment([{ topic: 'orders', partitions: [0, 1, 2] }]);
    expect(decodeConsumerAssignment(whole.subarray(0, whole.length - 10))).toEqual([
      { topic: 'orders', partitions: [0] },
    ]);
    expect(decodeConsumerAssignment(Buffer.from('not a consumer assignment'))).toEqual(expect.any(Array));
    expect(decodeConsumerAssignment(new Uint8Array(0))).toEqual([]);
  });
});
