import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient, type Message } from '@ledgerline/client';
import { TopicsService } from '@ledgerline/proto';
import { closeClient as closeRpcClient, createClient as createRpcClient } from '@ledgerline/rpc';
import { eventually } from '@ledgerline/testing';
import type { RunningStandalone } from './standalone.js';
import { ledgerline } from './testing/run-cli.js';
import { take } from './testing/take-messages.js';
import { startTestStandalone } from './testing/test-standalone.js';

// What a user does in the first minutes on a fresh standalone, with no admin
// call first: produce, consume and read public/default topics from the SDK
// and the CLI, and read at an offset retention already removed.

const text = (message: Message): string => Buffer.from(message.payload).toString();

describe('the first minutes on a fresh standalone without its Kafka listener', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let url: string;
  let client: LedgerlineClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-first-minutes-'));
    // Two entries per ledger, rolled over and trimmed at once (retention 0, a deduplication snapshot per entry):
    // a topic nobody subscribed to loses its closed ledgers within a trim interval.
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--kafka-enabled',
      'false',
      '--max-entries-per-ledger',
      '2',
      '--min-ledger-age-ms',
      '0',
      '--trim-interval-ms',
      '100',
      '--dedup-snapshot-interval-entries',
      '1',
    ]);
    url = `127.0.0.1:${standalone.grpcPort}`;
    client = createClient({ serviceUrl: url, reconnectInitialDelayMs: 10 });
  });
  afterAll(async () => {
    await client?.close();
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('has public/default with topic auto-creation on, Kafka listener or not', async () => {
    expect(standalone.kafka).toBeUndefined();
    const home = await standalone.admin.getNamespace('public/default');
    expect(home.policies.allowAutoTopicCreation).toBe(true);
  });

  it('creates a topic on first use by an SDK consumer, producer and reader', async () => {
    const consumer = await client.subscribe({
      topic: 'public/default/first-sdk',
      subscription: 'first',
      initialPosition: 'earliest',
    });
    const producer = await client.producer({ topic: 'public/default/first-sdk-produced', batching: false });
    expect((await producer.send('hello')).offset).toBe(0n);
    const reader = await client.reader({ topic: 'public/default/first-sdk-produced', start: 'earliest' });
    expect((await take(reader, 1)).map(text)).toEqual(['hello']);
    const again = await client.producer({ topic: 'public/default/first-sdk', batching: false });
    await again.send('to the consumer');
    expect(text(await consumer.receive())).toBe('to the consumer');
    for (const closing of [consumer, producer, reader, again]) await closing.close();
    const listed = await standalone.admin.listTopics('public/default');
    expect(listed.topics).toEqual(
      expect.arrayContaining([
        'persistent://public/default/first-sdk',
        'persistent://public/default/first-sdk-produced',
      ]),
    );
  });

  it('creates a topic on first use by the CLI: produce, read and perf produce', async () => {
    expect(await ledgerline('produce', 'public/default/first-cli', '-m', 'hi', '--url', url)).toMatchObject({
      code: 0,
      stdout: 'produced 1 message(s) to public/default/first-cli at offset 0\n',
    });
    expect(await ledgerline('read', 'public/default/first-cli', '--offset', '0', '--url', url)).toMatchObject({
      code: 0,
      stdout: 'hi\n',
    });
    const run = await ledgerline(
      'perf',
      'produce',
      'public/default/t1',
      '--duration',
      '1',
      '--rate',
      '50',
      '--json',
      '--url',
      url,
    );
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(summary).toMatchObject({ type: 'summary', mode: 'produce', errors: 0 });
  });

  it('still refuses TOPIC_NOT_FOUND where the namespace does not allow auto-creation, saying how to get one', async () => {
    await standalone.admin.createTenant('acme');
    await standalone.admin.createNamespace('acme/closed');
    await expect(client.producer({ topic: 'acme/closed/typo' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      reason: 'TOPIC_NOT_FOUND',
    });
    const run = await ledgerline('produce', 'acme/closed/typo', '-m', 'x', '--url', url);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'error: NOT_FOUND TOPIC_NOT_FOUND: topic persistent://acme/closed/typo does not exist',
    );
    expect(run.stderr).toContain('--allow-auto-topic-creation true');
    expect((await standalone.admin.listTopics('acme/closed')).topics).toEqual([]);
  });

  describe('reading at an offset retention removed', () => {
    const topic = 'public/default/trimmed';
    let earliest: bigint;

    beforeAll(async () => {
      const producer = await client.producer({ topic, batching: false });
      for (let i = 0; i < 7; i++) await producer.send(`m${i}`);
      await producer.close();
      const topics = createRpcClient(TopicsService, url);
      try {
        const first = async () => (await topics.findPosition({ topic, target: { case: 'offset', value: 0n } })).offset;
        await eventually(async () => (await first()) > 0n, { description: 'the first ledgers to be trimmed' });
        earliest = await first();
      } finally {
        closeRpcClient(topics);
      }
    });

    it('ledgerline read --offset answers at once with OUT_OF_RANGE naming the earliest retained offset', async () => {
      const startedAt = Date.now();
      const run = await ledgerline('read', topic, '--offset', '0', '--url', url);
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(
        /^error: OUT_OF_RANGE OFFSET_TRIMMED: offset 0 of public\/default\/trimmed was removed/,
      );
      expect(run.stderr).toContain(`the earliest retained offset is ${earliest}`);
      // Not a reader waiting in silence: well within one fetch's wait at the end of the topic.
      expect(Date.now() - startedAt).toBeLessThan(5_000);
      const fromEarliest = await ledgerline(
        'read',
        topic,
        '--offset',
        '0',
        '--on-trimmed-offset',
        'earliest',
        '--url',
        url,
      );
      expect(fromEarliest).toMatchObject({ code: 0, stdout: `m${earliest}\n` });
    });

    it('an SDK reader started there fails with the earliest offset in the details, or starts there when asked', async () => {
      const refusing = await client.reader({ topic, start: { offset: 0 } });
      await expect(refusing.readNext()).rejects.toMatchObject({
        code: 'OUT_OF_RANGE',
        reason: 'OFFSET_TRIMMED',
        details: { offset: '0', earliest_offset: String(earliest) },
      });
      await refusing.close();
      const resetting = await client.reader({ topic, start: { offset: 0 }, onTrimmedOffset: 'earliest' });
      expect((await take(resetting, 1)).map((message) => message.offset)).toEqual([earliest]);
      await resetting.close();
      const fromEarliest = await client.reader({ topic });
      expect((await take(fromEarliest, 1)).map(text)).toEqual([`m${earliest}`]);
      await fromEarliest.close();
    });
  });
});
