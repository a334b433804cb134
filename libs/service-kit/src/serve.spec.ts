import { MetadataStoreService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { createLogger } from './logger.js';
import { serve, type RunningService } from './serve.js';
import { serviceConfigSchema } from './service-config.js';
import { waitingService } from './testing/waiting-service.js';

const config = serviceConfigSchema.parse({
  grpcHost: '127.0.0.1',
  grpcPort: 0,
  metricsHost: '127.0.0.1',
  metricsPort: 0,
  drainTimeoutMs: 5000,
});

async function httpGet(port: number, path: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

describe('serve', () => {
  let service: RunningService;
  let waiting: ReturnType<typeof waitingService>;
  const closed: string[] = [];

  beforeEach(async () => {
    closed.length = 0;
    waiting = waitingService();
    service = await serve({
      name: 'metadata-test',
      config,
      services: [waiting.registration],
      logger: createLogger('metadata-test', { level: 'silent' }),
      signals: [],
      closeTimeoutMs: 200,
      closers: [{ name: 'ledger store', close: () => void closed.push('ledger store') }],
    });
  });

  afterEach(async () => {
    await service.shutdown();
  });

  it('serves Prometheus metrics, including the gRPC calls it handled', async () => {
    const client = createClient(MetadataStoreService, `127.0.0.1:${service.grpcPort}`);
    try {
      await client.get({ path: '/wait/0' });
    } finally {
      closeClient(client);
    }
    const metrics = await httpGet(service.metricsPort, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain('text/plain');
    expect(metrics.body).toContain('process_cpu_user_seconds_total');
    expect(metrics.body).toMatch(
      /ledgerline_grpc_server_handled_total\{method="\/ledgerline.v1.MetadataStoreService\/Get",code="OK",service="metadata-test"\} 1/,
    );
    expect(metrics.body).toContain('ledgerline_grpc_server_handling_seconds_bucket');
  });

  it('answers /healthz 200 while serving, 503 while draining, and 404 elsewhere', async () => {
    expect((await httpGet(service.metricsPort, '/healthz')).status).toBe(200);
    expect((await httpGet(service.metricsPort, '/nope')).status).toBe(404);
    const client = createClient(MetadataStoreService, `127.0.0.1:${service.grpcPort}`);
    try {
      const pending = client.get({ path: '/wait/500' });
      for (let i = 0; waiting.started.length === 0 && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
      const stopping = service.shutdown('test');
      expect((await httpGet(service.metricsPort, '/healthz')).status).toBe(503);
      await pending;
      expect((await stopping).forced).toBe(false);
    } finally {
      closeClient(client);
    }
  });

  it('runs the closers newest first, once, however often shutdown is called', async () => {
    service.addCloser({ name: 'bus', close: async () => void closed.push('bus') });
    const first = service.shutdown('first');
    const second = service.shutdown('second');
    expect(second).toBe(first);
    const report = await first;
    expect(report).toEqual({ reason: 'first', forced: false, failedClosers: [] });
    expect(closed).toEqual(['bus', 'ledger store']);
  });

  it('reports closers that fail or hang and still runs the rest', async () => {
    service.addCloser({ name: 'stuck', close: () => new Promise<void>(() => undefined) });
    service.addCloser({
      name: 'broken',
      close: () => {
        throw new Error('disk gone');
      },
    });
    const report = await service.shutdown();
    expect(report.failedClosers).toEqual(['broken', 'stuck']);
    expect(closed).toEqual(['ledger store']);
  });

  it('says at warn level that it stopped uncleanly, and why, so a service logging at warn shows it', async () => {
    const lines: Record<string, unknown>[] = [];
    const destination = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    const quiet = await serve({
      name: 'metadata-test',
      config,
      services: [waitingService().registration],
      logger: createLogger('metadata-test', { level: 'warn', destination }),
      signals: [],
      closeTimeoutMs: 200,
      closers: [
        {
          name: 'bus',
          close: () => {
            throw new Error('bus gone');
          },
        },
      ],
    });
    await quiet.shutdown();
    expect(lines.find((line) => line.msg === 'stopped uncleanly')).toMatchObject({
      forced: false,
      failedClosers: ['bus'],
    });
  });
});
