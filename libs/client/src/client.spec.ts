import { createClient, ClientReason } from './index.js';
import { FakeCluster, waitFor } from './testing/index.js';

describe('createClient', () => {
  it.each([
    [{ serviceUrl: '' }, 'serviceUrl'],
    [{ serviceUrl: 'localhost:6650', operationTimeoutMs: 0 }, 'operationTimeoutMs'],
    [{ serviceUrl: 'localhost:6650', maxReconnectAttempts: 1.5 }, 'maxReconnectAttempts'],
    [{ serviceUrl: 'localhost:6650', reconnectMaxDelayMs: 600_001 }, 'reconnectMaxDelayMs'],
    [{ serviceUrl: 'localhost:6650', token: '' }, 'token'],
  ])('refuses %j naming the option', (options, option) => {
    expect(() => createClient(options)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT', reason: ClientReason.INVALID_OPTION, details: { option } }),
    );
  });

  it('checks producer options before any call', async () => {
    const client = createClient({ serviceUrl: 'localhost:1' });
    await expect(client.producer({ topic: 't/n/x', batching: { maxMessages: 0 } })).rejects.toMatchObject({
      details: { option: 'batching.maxMessages' },
    });
    await expect(client.producer({ topic: '' })).rejects.toMatchObject({ details: { option: 'topic' } });
    await client.close();
  });

  it('reports topic stats per partition and unloads a topic to another owner', async () => {
    const cluster = await FakeCluster.start();
    cluster.createTopic('acme/orders/parted', 2);
    const client = createClient({ serviceUrl: cluster.serviceUrl });
    const producer = await client.producer({ topic: 'acme/orders/parted', batching: false });
    await producer.send('x', { key: 'a' });
    const stats = await client.topicStats('acme/orders/parted');
    expect(stats.map((each) => each.topic)).toEqual([
      'acme/orders/parted-partition-0',
      'acme/orders/parted-partition-1',
    ]);
    expect(stats.reduce((sum, each) => sum + each.stats.nextOffset, 0n)).toBe(1n);
    await client.unloadTopic('acme/orders/parted');
    expect(cluster.ownerOf('acme/orders/parted-partition-0')).toBe(1);
    await producer.send('y', { key: 'a' });
    await client.close();
    await cluster.close();
  });

  it('looks a missing topic up before a producer, consumer or reader, so the service creates it where allowed', async () => {
    const cluster = await FakeCluster.start();
    const client = createClient({ serviceUrl: cluster.serviceUrl });
    try {
      // Where the namespace does not allow auto-creation, the lookup's TOPIC_NOT_FOUND is the answer.
      await expect(client.producer({ topic: 'public/default/absent' })).rejects.toMatchObject({
        code: 'NOT_FOUND',
        reason: 'TOPIC_NOT_FOUND',
      });
      cluster.autoCreateTopics = true;
      const producer = await client.producer({ topic: 'public/default/fresh', batching: false });
      expect((await producer.send('first')).offset).toBe(0n);
      const consumer = await client.subscribe({
        topic: 'public/default/fresh-consumed',
        subscription: 's',
        initialPosition: 'earliest',
      });
      const reader = await client.reader({ topic: 'public/default/fresh-read' });
      expect(cluster.storedTexts('public/default/fresh')).toEqual(['first']);
      expect(cluster.topic('public/default/fresh-consumed').entries).toEqual([]);
      expect(cluster.topic('public/default/fresh-read').entries).toEqual([]);
      await consumer.close();
      await reader.close();
    } finally {
      await client.close();
      await cluster.close();
    }
  });

  it('ends every open stream on close, so a process that closed its client can exit', async () => {
    const cluster = await FakeCluster.start();
    cluster.createTopic('acme/orders/open');
    const client = createClient({ serviceUrl: cluster.serviceUrl });
    await client.subscribe({ topic: 'acme/orders/open', subscription: 's' });
    const producer = await client.producer({ topic: 'acme/orders/open' });
    await producer.send('x');
    await client.reader({ topic: 'acme/orders/open', start: 'latest' });
    await waitFor('the consume and publish streams', () => cluster.openStreams(0) === 2);
    await client.close();
    await waitFor('every stream to end', () => cluster.openStreams(0) === 0);
    await cluster.close();
  });
});
