import { noConsumers } from './testing/no-consumers.js';
import { collect, requestsOf } from './testing/streams.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const text = (s: string) => new TextEncoder().encode(s);

/** A batch of records stamped long before the broker's clock, with its largest event time when `withMax`. */
function pastBatch(topic: string, times: number[], withMax = true) {
  return {
    message: {
      topic,
      messages: times.map((time) => ({ payload: text(`t${time}`), eventTimeMs: BigInt(time) })),
      ...(withMax ? { maxEventTimeMs: BigInt(Math.max(...times)) } : {}),
    },
  };
}

describe('writer owner: FindPosition by event time', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers });
  });
  afterAll(async () => harness.close());

  async function publish(requests: ReturnType<typeof pastBatch>[]) {
    const responses = await collect(harness.topics.publish(requestsOf(requests)));
    return responses.map((response) => response.result.case);
  }

  const find = (topic: string, timestampMs: number, byEventTime: boolean) =>
    harness.topics.findPosition({ topic, target: { case: 'timestampMs', value: BigInt(timestampMs) }, byEventTime });

  it('answers with the first message whose event time reaches the time, where broker time answers the first entry', async () => {
    const topic = await harness.createTopic('created-time');
    expect(await publish([pastBatch(topic, [1_000, 2_000]), pastBatch(topic, [3_000, 4_000, 5_000])])).toEqual([
      'receipt',
      'receipt',
    ]);
    const offsetAt = async (time: number) => (await find(topic, time, true)).offset;
    expect(await offsetAt(1_500)).toBe(1n);
    expect(await offsetAt(3_500)).toBe(3n);
    expect((await find(topic, 5_001, true)).pastEnd).toBe(true);
    expect((await find(topic, 3_500, false)).offset).toBe(0n);
  });

  it('finds entries published without their largest event time by broker time, with no error', async () => {
    const topic = await harness.createTopic('no-max');
    expect(await publish([pastBatch(topic, [1_000], false), pastBatch(topic, [2_000], false)])).toEqual([
      'receipt',
      'receipt',
    ]);
    // Stored now, so their broker times are after 2,000: the first entry answers.
    const found = await find(topic, 1_500, true);
    expect([found.offset, found.pastEnd]).toEqual([0n, false]);
  });

  it('refuses a largest event time below -1, and stores -1 as "none has a time"', async () => {
    const topic = await harness.createTopic('bad-max');
    const bad = { message: { topic, payload: text('x'), maxEventTimeMs: -2n } };
    const none = { message: { topic, payload: text('y'), maxEventTimeMs: -1n } };
    const responses = await collect(harness.topics.publish(requestsOf([bad, none])));
    expect(responses.map((response) => response.result.case)).toEqual(['failure', 'receipt']);
    expect((await find(topic, 1, true)).pastEnd).toBe(true);
  });
});
