import {
  decodeConsumerAssignment,
  decodeConsumerSubscription,
  encodeConsumerAssignment,
  encodeConsumerSubscription,
} from './consumer-assignment.js';

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

describe('decodeConsumerSubscription', () => {
  it("reads a consumer's subscribed topics", () => {
    expect(decodeConsumerSubscription(encodeConsumerSubscription(['orders', 'clicks']))).toEqual(['orders', 'clicks']);
    expect(decodeConsumerSubscription(encodeConsumerSubscription([]))).toEqual([]);
  });

  it('reads a kafkajs subscription (version 1, with user data)', () => {
    const kafkajsSubscription = Buffer.concat([
      Buffer.from([0, 1, 0, 0, 0, 1, 0, 6]),
      Buffer.from('orders'),
      Buffer.from([0, 0, 0, 2, 9, 9]),
    ]);
    expect(decodeConsumerSubscription(kafkajsSubscription)).toEqual(['orders']);
  });

  it('answers undefined for bytes that hold no whole topic list, never throwing', () => {
    const whole = encodeConsumerSubscription(['orders', 'clicks']);
    expect(decodeConsumerSubscription(whole.subarray(0, 12))).toBeUndefined();
    expect(decodeConsumerSubscription(Buffer.from([0, 0, 0x7f, 0xff, 0xff, 0xff]))).toBeUndefined();
    expect(decodeConsumerSubscription(Buffer.from([0, 0, 0, 0, 0, 1, 0xff, 0xff]))).toBeUndefined();
    expect(decodeConsumerSubscription(new Uint8Array(0))).toBeUndefined();
  });
});
