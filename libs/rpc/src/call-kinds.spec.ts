import { Metadata } from '@grpc/grpc-js';
import { closeClient, createClient } from './create-client.js';
import { TestService } from './testing/test-service.js';
import { eventually } from '@ledgerline/testing';
import { fromArray, pushable, startTestServer, type TestServer } from './testing/test-server.js';

describe('the grpc-js adapter over a loopback socket', () => {
  let server: TestServer;
  let client: ReturnType<typeof createClient<typeof TestService>>;

  beforeAll(async () => {
    server = await startTestServer();
    client = createClient(TestService, server.address);
  });

  afterAll(async () => {
    closeClient(client);
    await server.stop();
  });

  it('answers a unary call and shows the handler the metadata and deadline', async () => {
    const metadata = new Metadata();
    metadata.set('x-tenant', 'acme');
    const response = await client.echo({ text: 'hello' }, { metadata, deadlineMs: 10_000 });
    expect(response.text).toBe('hello');
    const context = server.seen.started.at(-1)!;
    expect(context.method).toBe('/ledgerline.test.v1.TestService/Echo');
    expect(context.metadata.get('x-tenant')).toEqual(['acme']);
    expect(Number.isFinite(context.deadlineMs)).toBe(true);
    expect(context.signal.aborted).toBe(false);
  });

  it('reports an infinite deadline when the client sets none', async () => {
    await client.echo({ text: 'no deadline' });
    expect(server.seen.started.at(-1)!.deadlineMs).toBe(Infinity);
  });

  it('streams server responses in order as an async iterable', async () => {
    const indexes: number[] = [];
    for await (const response of client.repeat({ text: 'r', count: 50 })) {
      expect(response.text).toBe('r');
      indexes.push(response.index);
    }
    expect(indexes).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });

  it('cancels a server stream the caller stops reading', async () => {
    let read = 0;
    for await (const _response of client.repeat({ text: 'stop early', count: 2, delayMs: 30_000 })) {
      if (++read === 2) break;
    }
    const context = server.seen.started.at(-1)!;
    await eventually(() => context.signal.aborted);
    expect(server.seen.aborted).toContain(context);
  });

  it('collects a client stream of many requests into one response', async () => {
    const texts = Array.from({ length: 200 }, (_, i) => `m${i}`);
    const response = await client.collect(fromArray(texts.map((text) => ({ text }))));
    expect(response.index).toBe(200);
    expect(response.text).toBe(texts.join(','));
  });

  it('answers an empty client stream', async () => {
    const response = await client.collect(fromArray([]));
    expect(response).toMatchObject({ text: '', index: 0 });
  });

  it('interleaves a bidi stream: each reply arrives before the next request is sent', async () => {
    const outbox = pushable<{ text: string }>();
    const replies = client.chat(outbox.iterable)[Symbol.asyncIterator]();
    for (const text of ['alpha', 'beta', 'gamma']) {
      outbox.push({ text });
      const reply = await replies.next();
      expect(reply.done).toBe(false);
      expect(reply.value).toMatchObject({ text: text.toUpperCase() });
    }
    outbox.end();
    expect((await replies.next()).done).toBe(true);
  });

  it('carries large bidi streams with backpressure in both directions', async () => {
    const count = 500;
    const requests = Array.from({ length: count }, (_, i) => ({ text: `b${i}`, padding: new Uint8Array(1024) }));
    let received = 0;
    for await (const reply of client.chat(fromArray(requests))) {
      expect(reply.index).toBe(received);
      received++;
    }
    expect(received).toBe(count);
  });

  it('shares one channel between clients', async () => {
    const { createChannel } = await import('./create-client.js');
    const channel = createChannel(server.address);
    try {
      const first = createClient(TestService, channel);
      const second = createClient(TestService, channel);
      const [a, b] = await Promise.all([first.echo({ text: 'a' }), second.echo({ text: 'b' })]);
      expect([a.text, b.text]).toEqual(['a', 'b']);
      closeClient(first);
      expect((await second.echo({ text: 'still open' })).text).toBe('still open');
    } finally {
      channel.close();
    }
  });
});
