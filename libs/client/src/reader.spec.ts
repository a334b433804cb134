import { createClient, ClientReason, type LedgerlineClient, type Message } from './index.js';
import { FakeCluster } from './testing/index.js';

const TOPIC = 'persistent://acme/orders/payments';

function text(message: Message): string {
  return Buffer.from(message.payload).toString();
}

describe('reader', () => {
  let cluster: FakeCluster;
  let client: LedgerlineClient;

  beforeEach(async () => {
    cluster = await FakeCluster.start();
    cluster.createTopic(TOPIC);
    client = createClient({ serviceUrl: cluster.serviceUrl, reconnectInitialDelayMs: 1 });
  });
  afterEach(async () => {
    await client.close();
    await cluster.close();
  });

  async function produceAt(times: number[]): Promise<void> {
    const producer = await client.producer({ topic: TOPIC, batching: { maxMessages: 2, maxDelayMs: 1000 } });
    const topic = cluster.topic(TOPIC);
    for (const [index, time] of times.entries()) {
      topic.clock = () => time;
      const sends = [producer.send(`m${2 * index}`), producer.send(`m${2 * index + 1}`)];
      await Promise.all(sends);
    }
    await producer.close();
  }

  async function take(reader: AsyncIterable<Message>, count: number): Promise<string[]> {
    const got: string[] = [];
    for await (const message of reader) {
      got.push(text(message));
      if (got.length === count) break;
    }
    return got;
  }

  it('reads from an offset, skipping the earlier messages of the batch that holds it', async () => {
    await produceAt([1000, 2000, 3000]);
    const reader = await client.reader({ topic: TOPIC, start: { offset: 3 } });
    expect(await take(reader, 3)).toEqual(['m3', 'm4', 'm5']);
    await reader.close();
  });

  it('reads from the first message stored at or after a time', async () => {
    await produceAt([1000, 2000, 3000, 4000]);
    const reader = await client.reader({ topic: TOPIC, start: { timestamp: new Date(2500) } });
    expect(await take(reader, 2)).toEqual(['m4', 'm5']);
    const exact = await client.reader({ topic: TOPIC, start: { timestamp: 2000 } });
    expect(await take(exact, 1)).toEqual(['m2']);
  });

  it('asks for one entry first, then for as many as its queue holds in messages, batches counted whole', async () => {
    // Batches of 2 messages: a receiver queue of 10 holds 5 of them.
    await produceAt([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]);
    const reader = await client.reader({ topic: TOPIC, start: 'earliest', receiverQueueSize: 10 });
    expect(await take(reader, 20)).toEqual(Array.from({ length: 20 }, (_, index) => `m${index}`));
    await reader.close();
    expect(cluster.fetchMaxEntries[0]).toBe(1);
    const later = cluster.fetchMaxEntries.slice(1);
    expect(later.every((entries) => entries >= 1 && entries <= 5)).toBe(true);
    expect(later.some((entries) => entries > 1)).toBe(true);
  });

  it('finds where to start by time with one FindPosition call, not a search of fetches', async () => {
    await produceAt([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]);
    const fetchesBefore = cluster.fetchByOffsetCalls;
    const reader = await client.reader({ topic: TOPIC, start: { timestamp: 6500 } });
    expect(await take(reader, 1)).toEqual(['m12']);
    expect(cluster.findPositionCalls).toBe(1);
    // The one fetch is the read itself, from the offset found.
    expect(cluster.fetchByOffsetCalls - fetchesBefore).toBe(1);
    await reader.close();
  });

  it('starts a reader by a time after every message at the end, waiting for the next one', async () => {
    await produceAt([1000]);
    const reader = await client.reader({ topic: TOPIC, start: { timestamp: 9000 } });
    const next = reader.readNext();
    const producer = await client.producer({ topic: TOPIC });
    await producer.send('later');
    expect(text(await next)).toBe('later');
    await producer.close();
    await reader.close();
  });

  it('reads from the earliest, and from the latest waits for new messages', async () => {
    await produceAt([1000]);
    const earliest = await client.reader({ topic: TOPIC });
    expect(await take(earliest, 2)).toEqual(['m0', 'm1']);
    const latest = await client.reader({ topic: TOPIC, start: 'latest' });
    const next = latest.readNext();
    const producer = await client.producer({ topic: TOPIC });
    await producer.send('fresh');
    expect(text(await next)).toBe('fresh');
  });

  it('keeps reading when the topic moves to another owner', async () => {
    await produceAt([1000]);
    const reader = await client.reader({ topic: TOPIC });
    expect(await take(reader, 2)).toEqual(['m0', 'm1']);
    cluster.moveTopic(TOPIC, 1);
    const producer = await client.producer({ topic: TOPIC });
    await producer.send('after-move');
    expect(text(await reader.readNext())).toBe('after-move');
  });

  it('fails at once with OUT_OF_RANGE naming the earliest retained offset when started at an offset retention removed', async () => {
    await produceAt([1000, 2000, 3000]);
    cluster.topic(TOPIC).earliestOffset = 2n;
    const fetchesBefore = cluster.fetchByOffsetCalls;
    const reader = await client.reader({ topic: TOPIC, start: { offset: 1 } });
    await expect(reader.readNext()).rejects.toMatchObject({
      code: 'OUT_OF_RANGE',
      reason: 'OFFSET_TRIMMED',
      details: { earliest_offset: '2', offset: '1' },
    });
    // One answer, not retried: the refusal stands until the caller picks another offset.
    expect(cluster.fetchByOffsetCalls - fetchesBefore).toBe(1);
    await reader.close();
  });

  it("goes on from the earliest retained offset with onTrimmedOffset 'earliest', as a reader from the earliest does", async () => {
    await produceAt([1000, 2000, 3000]);
    cluster.topic(TOPIC).earliestOffset = 2n;
    const asked = await client.reader({ topic: TOPIC, start: { offset: 1 }, onTrimmedOffset: 'earliest' });
    expect(await take(asked, 4)).toEqual(['m2', 'm3', 'm4', 'm5']);
    const earliest = await client.reader({ topic: TOPIC });
    expect(await take(earliest, 1)).toEqual(['m2']);
    const refusing = await client.reader({ topic: TOPIC, onTrimmedOffset: 'fail' });
    await expect(refusing.readNext()).rejects.toMatchObject({ reason: 'OFFSET_TRIMMED' });
    await expect(client.reader({ topic: TOPIC, onTrimmedOffset: 'latest' as 'fail' })).rejects.toMatchObject({
      reason: ClientReason.INVALID_OPTION,
      details: { option: 'onTrimmedOffset' },
    });
  });

  it('rejects reads after close with READER_CLOSED and checks its options', async () => {
    const reader = await client.reader({ topic: TOPIC });
    await reader.close();
    await expect(reader.readNext()).rejects.toMatchObject({ reason: ClientReason.READER_CLOSED });
    await expect(client.reader({ topic: TOPIC, start: { offset: -1 } })).rejects.toMatchObject({
      reason: ClientReason.INVALID_OPTION,
      details: { option: 'start.offset' },
    });
  });
});
