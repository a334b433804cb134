import { decodeConsumerAssignment, encodeConsumerAssignment } from './consumer-assignment.js';

describe('decodeConsumerAssignment', () => {
  it("reads a consumer's topics and partitions", () => {
    const topics = [
      { topic: 'orders', partitions: [0, 2] },
      { topic: 'clicks', partitions: [1] },
    ];
    expect(decodeConsumerAssignment(encodeConsumerAssignment(topics))).toEqual(topics);
  });

  it('gives what it could read of bytes of another protocol or cut short, never throwing', () => {
    const whole = encodeConsumerAssignment([{ topic: 'orders', partitions: [0, 1, 2] }]);
    expect(decodeConsumerAssignment(whole.subarray(0, whole.length - 10))).toEqual([
      { topic: 'orders', partitions: [0] },
    ]);
    expect(decodeConsumerAssignment(Buffer.from('not a consumer assignment'))).toEqual(expect.any(Array));
    expect(decodeConsumerAssignment(new Uint8Array(0))).toEqual([]);
  });
});
