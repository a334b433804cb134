import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, keyHashPartition, type LedgerlineClient, type Message } from '@ledgerline/client';
import { TopicsService } from '@ledgerline/proto';
import { closeClient as closeRpcClient, createClient as createRpcClient } from '@ledgerline/rpc';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';
import { take } from './testing/take-messages.js';

// The SDK end to end against a real standalone in this process: the metadata
// service's lookups and admin, the writer owner's publish with deduplication,
// fetches by offset, stats and unload.

const text = (message: Message): string => Buffer.from(message.payload).toString();

describe('the client SDK against an in-process standalone', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let client: LedgerlineClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-sdk-'));
    standalone = await startTestStandalone(join(dir, 'data'));
    client = createClient({ serviceUrl: `127.0.0.1:${standalone.grpcPort}`, reconnectInitialDelayMs: 10 });
    await standalone.admin.createTenant('acme');
    await standalone.admin.createNamespace('acme/orders');
  });
  afterAll(async () => {
    await client.close();
    await standalone.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes batched and single messages with contiguous offsets and reads them back by offset', async () => {
    await standalone.admin.createTopic('acme/orders/plain', 0);
    const batched = await client.producer({ topic: 'acme/orders/plain', batching: { maxMessages: 4, maxDelayMs: 20 } });
    const first = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        batched.send(`b${index}`, { key: 'k', properties: { n: String(index) } }),
      ),
    );
    const single = await client.producer({ topic: 'acme/orders/plain', batching: false });
    const second = await Promise.all(Array.from({ length: 3 }, (_, index) => single.send(`s${index}`)));
    expect([...first, ...second].map((receipt) => receipt.offset)).toEqual(
      Array.from({ length: 13 }, (_, index) => BigInt(index)),
    );
    expect(first[5]!.messageId.batchIndex).toBe(1);
    expect(second[0]!.messageId.batchIndex).toBe(-1);
    const reader = await client.reader({ topic: 'acme/orders/plain', start: { offset: 2 } });
    const read = await take(reader, 11);
    expect(read.map(text)).toEqual([...Array.from({ length: 8 }, (_, index) => `b${index + 2}`), 's0', 's1', 's2']);
    expect(read[0]).toMatchObject({ key: 'k', properties: { n: '2' }, offset: 2n });
    await reader.close();
    const [stats] = await client.topicStats('acme/orders/plain');
    expect(stats!.stats.nextOffset).toBe(13n);
  });

  it('reads from a time', async () => {
    await standalone.admin.createTopic('acme/orders/timed', 0);
    const producer = await client.producer({ topic: 'acme/orders/timed', batching: false });
    await producer.send('before');
    const startedAt = Date.now() + 5;
    while (Date.now() <= startedAt) await new Promise((resolve) => setTimeout(resolve, 1));
    await producer.send('after');
    const reader = await client.reader({ topic: 'acme/orders/timed', start: { timestamp: startedAt } });
    expect((await take(reader, 1)).map(text)).toEqual(['after']);
    await reader.close();
  });

  it('routes keys over partitions as the Java client does', async () => {
    await standalone.admin.createTopic('acme/orders/parted', 4);
    const producer = await client.producer({ topic: 'acme/orders/parted', batching: false });
    const keys = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const receipts = await Promise.all(keys.map((key) => producer.send(key, { key })));
    expect(receipts.map((receipt) => receipt.messageId.partition)).toEqual(keys.map((key) => keyHashPartition(key, 4)));
  });

  it('keeps producing through unloads, with every message stored exactly once', async () => {
    await standalone.admin.createTopic('acme/orders/moving', 0);
    const producer = await client.producer({
      topic: 'acme/orders/moving',
      batching: { maxMessages: 5, maxDelayMs: 2 },
    });
    const sends: Promise<unknown>[] = [];
    for (let index = 0; index < 300; index++) {
      sends.push(producer.send(`m${index}`));
      if (index === 100 || index === 200) await client.unloadTopic('acme/orders/moving');
      if (index % 25 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(sends);
    const reader = await client.reader({ topic: 'acme/orders/moving' });
    const stored = (await take(reader, 300)).map(text);
    expect(stored).toEqual(Array.from({ length: 300 }, (_, index) => `m${index}`));
    const [stats] = await client.topicStats('acme/orders/moving');
    expect(stats!.stats.nextOffset).toBe(300n);
    await reader.close();
  });

  it('consumes with each subscription type, acknowledging, and a new Exclusive consumer is refused', async () => {
    await standalone.admin.createTopic('acme/orders/typed', 0);
    const producer = await client.producer({ topic: 'acme/orders/typed', batching: { maxMessages: 3, maxDelayMs: 5 } });
    for (const type of ['Exclusive', 'Failover', 'Shared', 'Key_Shared'] as const) {
      const consumer = await client.subscribe({ topic: 'acme/orders/typed', subscription: `sub-${type}`, type });
      await Promise.all(
        Array.from({ length: 6 }, (_, index) => producer.send(`${type}-${index}`, { key: `k${index % 2}` })),
      );
      const got: string[] = [];
      for await (const message of consumer) {
        if (text(message).startsWith(type)) got.push(text(message));
        await consumer.ack(message);
        if (got.length === 6) break;
      }
      expect(got.sort()).toEqual(Array.from({ length: 6 }, (_, index) => `${type}-${index}`));
      if (type === 'Exclusive') {
        await expect(
          client.subscribe({ topic: 'acme/orders/typed', subscription: 'sub-Exclusive' }),
        ).rejects.toMatchObject({ reason: 'CONSUMER_BUSY' });
      }
      await consumer.close();
    }
  });

  it('answers a fetch of many small batched messages under the gRPC message limit', async () => {
    // 20 entries of 1 000 one-byte messages: about 30 KB stored, but on the wire every message carries its
    // own offset, times and producer name (256 characters here), so the 20 entries are about 6.6 MB.
    await standalone.admin.createTopic('acme/orders/tiny', 0);
    const producer = await client.producer({
      topic: 'acme/orders/tiny',
      producerName: 'p'.repeat(256),
      batching: { maxMessages: 1_000, maxDelayMs: 50 },
    });
    const count = 20_000;
    const receipts = await Promise.all(Array.from({ length: count }, () => producer.send('x')));
    expect(receipts.at(-1)!.offset).toBe(BigInt(count - 1));
    await producer.close();
    const topics = createRpcClient(TopicsService, `127.0.0.1:${standalone.grpcPort}`);
    try {
      let offset = 0n;
      let fetches = 0;
      while (offset < BigInt(count)) {
        const { entries } = await topics.fetchByOffset({
          topic: 'persistent://acme/orders/tiny',
          offset,
          maxEntries: 500,
        });
        expect(entries.length).toBeGreaterThan(0);
        expect(entries[0]!.firstOffset).toBe(offset);
        offset = entries.at(-1)!.lastOffset + 1n;
        fetches++;
      }
      expect(fetches).toBeGreaterThan(1);
    } finally {
      closeRpcClient(topics);
    }
  });

  it('resumes a consumer across unloads with no acknowledged message redelivered', async () => {
    await standalone.admin.createTopic('acme/orders/resume', 0);
    const producer = await client.producer({
      topic: 'acme/orders/resume',
      batching: { maxMessages: 4, maxDelayMs: 2 },
    });
    await Promise.all(Array.from({ length: 60 }, (_, index) => producer.send(`m${index}`)));
    const consumer = await client.subscribe({
      topic: 'acme/orders/resume',
      subscription: 'resume',
      initialPosition: 'earliest',
      receiverQueueSize: 8,
    });
    const acked = new Set<string>();
    for await (const message of consumer) {
      expect(acked.has(text(message))).toBe(false);
      await consumer.ack(message);
      acked.add(text(message));
      if (acked.size === 20 || acked.size === 40) await client.unloadTopic('acme/orders/resume');
      if (acked.size === 60) break;
    }
    expect(acked.size).toBe(60);
    await consumer.close();
  });
});
