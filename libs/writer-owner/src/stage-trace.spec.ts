import { get } from 'node:http';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { TraceStage } from './stage-trace.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/metrics' }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
      response.on('error', reject);
    }).on('error', reject);
  });
}

/** The trace's value for `stage` and `quantile` ('count', '0.5', '0.99', '0.999', 'max'), or undefined. */
function traced(text: string, stage: string, quantile: string): number | undefined {
  const pattern = /^ledgerline_writer_stage_trace_ms\{([^}]*)\} (\S+)$/gm;
  for (const match of text.matchAll(pattern)) {
    if (match[1]!.includes(`stage="${stage}"`) && match[1]!.includes(`quantile="${quantile}"`)) return Number(match[2]);
  }
  return undefined;
}

describe('writer owner: the per-stage latency trace (stageTrace on)', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend, settings: { stageTrace: true } });
  });
  afterAll(async () => harness.close());

  it('times each stage of a publish and of its dispatch, and starts afresh after each scrape', async () => {
    const port = harness.writer.service.metricsPort;
    const topic = await harness.createTopic('traced');
    const consumer = new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: {
        topic,
        subscription: 'sub',
        type: SubscriptionType.EXCLUSIVE,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    consumer.flow(100);
    await scrape(port);
    async function* five() {
      for (let i = 0; i < 5; i++) {
        yield { message: { topic, payload: new Uint8Array(10), producerName: 'p', sequenceId: BigInt(i) } };
      }
    }
    for await (const response of harness.topics.publish(five())) expect(response.result.case).toBe('receipt');
    await consumer.until(() => consumer.entries.length === 5, 'five deliveries');
    const text = await scrape(port);
    // Per entry: appended to stored, and stored to its first dispatch.
    expect(traced(text, TraceStage.APPENDED_TO_STORED, 'count')).toBe(5);
    expect(traced(text, TraceStage.STORED_TO_DISPATCHED, 'count')).toBe(5);
    // Per batch (a request each here): read to appended, stored to answered, read to answered.
    for (const stage of [TraceStage.READ_TO_APPENDED, TraceStage.STORED_TO_ANSWERED, TraceStage.READ_TO_ANSWERED]) {
      expect(traced(text, stage, 'count')).toBeGreaterThanOrEqual(1);
    }
    // Per store write, from the managed ledger's append trace: its turn wait and the write.
    expect(traced(text, TraceStage.STORE_WRITE, 'count')).toBeGreaterThanOrEqual(1);
    expect(traced(text, TraceStage.TURN_WAIT, 'count')).toBeGreaterThanOrEqual(1);
    expect(traced(text, TraceStage.STORE_WRITE, 'max')).toBeGreaterThan(0);
    expect(traced(text, TraceStage.EVENT_LOOP_DELAY, 'count')).toBeGreaterThan(0);
    const p50 = traced(text, TraceStage.READ_TO_ANSWERED, '0.5')!;
    expect(p50).toBeLessThanOrEqual(traced(text, TraceStage.READ_TO_ANSWERED, '0.99')!);
    expect(traced(text, TraceStage.READ_TO_ANSWERED, '0.999')).toBeLessThanOrEqual(
      traced(text, TraceStage.READ_TO_ANSWERED, 'max')!,
    );
    // A scrape reads and resets: nothing was published since.
    const next = await scrape(port);
    expect(traced(next, TraceStage.APPENDED_TO_STORED, 'count')).toBe(0);
    expect(traced(next, TraceStage.APPENDED_TO_STORED, 'max')).toBeUndefined();
    consumer.close();
    await consumer.until(() => consumer.ended, 'the consumer to leave');
  });
});
