import { connect, createServer, type Server, type Socket } from 'node:net';
import { refusal } from '@ledgerline/testing';
import { closeClient, createClient } from './create-client.js';
import { keepaliveOptions } from './keepalive.js';
import { TestService } from './testing/test-service.js';
import { startTestServer } from './testing/test-server.js';

/**
 * A TCP proxy whose open connections can be made silent: they stay open and
 * carry nothing, as when a proxy loses its upstream without telling the client.
 * New connections are forwarded as before.
 */
class SilencingProxy {
  private readonly pairs: [Socket, Socket][] = [];
  private constructor(private readonly server: Server) {}

  static async start(targetPort: number): Promise<SilencingProxy> {
    const server = createServer();
    const proxy = new SilencingProxy(server);
    server.on('connection', (client) => {
      const upstream = connect({ host: '127.0.0.1', port: targetPort });
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      proxy.pairs.push([client, upstream]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  get connections(): number {
    return this.pairs.length;
  }

  silenceOpenConnections(): void {
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  async stop(): Promise<void> {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('keepalive pings', () => {
  it('close a connection that went silent, so later calls dial again instead of waiting out their deadlines', async () => {
    const server = await startTestServer();
    const proxy = await SilencingProxy.start(Number(server.address.split(':')[1]));
    const client = createClient(TestService, `127.0.0.1:${proxy.port}`, {
      keepaliveTimeMs: 300,
      keepaliveTimeoutMs: 300,
    });
    try {
      expect((await client.echo({ text: 'before' }, { deadlineMs: 5_000 })).text).toBe('before');
      proxy.silenceOpenConnections();
      // Whatever the call in flight meets (its deadline or the closed connection), the one after it must get through.
      await refusal(client.echo({ text: 'into the silence' }, { deadlineMs: 1_000 }));
      expect((await client.echo({ text: 'after' }, { deadlineMs: 10_000, waitForReady: true })).text).toBe('after');
      expect(proxy.connections).toBeGreaterThanOrEqual(2);
    } finally {
      closeClient(client);
      await proxy.stop();
      await server.stop();
    }
  });

  it('are on by default and can be turned off; bad values are refused', () => {
    expect(keepaliveOptions()).toMatchObject({
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      'grpc.keepalive_permit_without_calls': 1,
    });
    expect(keepaliveOptions({ keepaliveTimeMs: 0 })).toEqual({});
    expect(() => keepaliveOptions({ keepaliveTimeMs: -1 })).toThrow(/keepaliveTimeMs/);
    expect(() => keepaliveOptions({ keepaliveTimeoutMs: 1.5 })).toThrow(/keepaliveTimeoutMs/);
  });
});
