import { get } from 'node:http';
import { InitialPosition, SubscriptionType } from '@ledgerline/proto';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { consumeBackend } from './consume-backend.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

const PAYLOAD_BYTES = 100;

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

/** The value of one series of the exposition text, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const present = new Map([...(match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
    if (Object.entries(labels).every(([key, value]) => present.get(key) === value)) return Number(match[4]);
  }
  return undefined;
}

describe('writer owner: /metrics after publishing and consuming', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend });
  });
  afterAll(async () => harness.close());

  it('exposes the series issue 12 lists, with the values of what happened, refreshed on every scrape', async () => {
    const topic = await harness.createTopic('metrics');
    const payload = new Uint8Array(PAYLOAD_BYTES).fill(7);
    async function* five() {
      for (let i = 0; i < 5; i++) yield { message: { topic, payload, producerName: 'p', sequenceId: BigInt(i) } };
    }
    for await (const response of harness.topics.publish(five())) expect(response.result.case).toBe('receipt');
    for (let i = 5; i < 10; i++) {
      await harness.topics.publishOne({ message: { topic, payload, producerName: 'p', sequenceId: BigInt(i) } });
    }
    const duplicate = await harness.topics.publishOne({
      message: { topic, payload, producerName: 'p', sequenceId: 9n },
    });
    expect(duplicate.receipt!.duplicate).toBe(true);

    const consumer = new TestConsumer(harness.topics, {
      case: 'subscribe',
      value: {
        topic,
        subscription: 'sub',
        type: SubscriptionType.SHARED,
        consumerName: 'c',
        initialPosition: InitialPosition.EARLIEST,
      },
    });
    consumer.flow(8);
    await consumer.until(() => consumer.entries.length === 8, 'eight deliveries');
    // Acks of entries 0, 2 and 4 (with a receipt, so the cursor persists): mark-delete after 0, holes at 1 and 3.
    consumer.ack([consumer.entries[0]!, consumer.entries[2]!, consumer.entries[4]!], 1n);
    await consumer.until(() => consumer.events.some((e) => e.event.case === 'ackReceipt'), 'the ack receipt');

    const port = harness.writer.service.metricsPort;
    const text = await scrape(port);
    const byTopic = { topic };
    const bySubscription = { topic, subscription: 'sub' };
    expect(sample(text, 'ledgerline_writer_messages_in_total', byTopic)).toBe(10);
    expect(sample(text, 'ledgerline_writer_bytes_in_total', byTopic)).toBeGreaterThanOrEqual(10 * PAYLOAD_BYTES);
    expect(sample(text, 'ledgerline_writer_messages_out_total', byTopic)).toBe(8);
    expect(sample(text, 'ledgerline_writer_bytes_out_total', byTopic)).toBe(8 * PAYLOAD_BYTES);
    // Every publish answered (the duplicate too), by either RPC, is timed.
    expect(sample(text, 'ledgerline_writer_publish_latency_seconds_count')).toBe(11);
    expect(sample(text, 'ledgerline_writer_publish_latency_seconds_bucket', { le: '+Inf' })).toBe(11);
    expect(sample(text, 'ledgerline_writer_dedup_hits_total', byTopic)).toBe(1);
    // Where the time went after storage: each first delivery is an appended_to_delivered sample.
    const stage = (name: string) => sample(text, 'ledgerline_writer_stage_seconds_count', { stage: name });
    expect(stage('appended_to_delivered')).toBe(8);
    expect(stage('received_to_stored')).toBeUndefined();
    expect(sample(text, 'ledgerline_writer_stage_seconds_sum', { stage: 'appended_to_delivered' })).toBeGreaterThan(0);
    expect(sample(text, 'ledgerline_writer_topics_loaded')).toBe(1);
    expect(sample(text, 'ledgerline_writer_leases_held')).toBe(1);
    // No GetTopicStats call has been made: the scrape itself refreshed these.
    expect(sample(text, 'ledgerline_writer_subscription_backlog_messages', bySubscription)).toBe(7);
    expect(sample(text, 'ledgerline_writer_subscription_unacked_messages', bySubscription)).toBe(5);
    expect(sample(text, 'ledgerline_writer_subscription_ack_holes', bySubscription)).toBe(2);
    expect(sample(text, 'ledgerline_writer_cursor_state_bytes', bySubscription)).toBeGreaterThan(0);
    // The managed ledger's counter of ranges a snapshot left out: registered here, nothing dropped yet.
    expect(text).toContain('# TYPE ledgerline_cursor_ranges_not_persisted_total counter');
    expect(sample(text, 'ledgerline_cursor_ranges_not_persisted_total', bySubscription)).toBeUndefined();
    // The per-stage trace is off unless its setting turns it on (stage-trace.spec.ts).
    expect(text).not.toContain('ledgerline_writer_stage_trace_ms');
    // The deduplication cursor is the owner's own: no series for it.
    expect(text).not.toContain('subscription="ledgerline.dedup"');

    // The next scrape sees the acks that came since, and a deleted subscription's series go.
    consumer.ack(consumer.entries.slice(0, 8), 2n);
    await consumer.until(() => consumer.events.filter((e) => e.event.case === 'ackReceipt').length === 2, 'acks');
    const after = await scrape(port);
    expect(sample(after, 'ledgerline_writer_subscription_backlog_messages', bySubscription)).toBe(2);
    expect(sample(after, 'ledgerline_writer_subscription_unacked_messages', bySubscription)).toBe(0);
    expect(sample(after, 'ledgerline_writer_subscription_ack_holes', bySubscription)).toBe(0);
    consumer.close();
    await consumer.until(() => consumer.ended, 'the consumer to leave');
    await harness.topics.unsubscribe({ topic, subscription: 'sub' });
    const gone = await scrape(port);
    expect(sample(gone, 'ledgerline_writer_subscription_backlog_messages', bySubscription)).toBeUndefined();
    expect(sample(gone, 'ledgerline_writer_topics_loaded')).toBe(1);
  });
});
