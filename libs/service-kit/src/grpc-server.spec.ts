import { eventually } from '@ledgerline/testing';
import {
  Client as GrpcClient,
  credentials,
  makeGenericClientConstructor,
  type ClientReadableStream,
} from '@grpc/grpc-js';
import { MetadataStoreService } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { closeClient, createClient } from '@ledgerline/rpc';
import { service as healthService } from 'grpc-health-check';
import { startGrpcServer, type RunningGrpcServer } from './grpc-server.js';
import { fileContainingSymbol, listServices } from './testing/reflection-client.js';
import { waitingService } from './testing/waiting-service.js';

const HealthClient = makeGenericClientConstructor(healthService, 'Health');
type HealthCall = (
  request: { service: string },
  callback: (error: Error | null, response?: { status: string }) => void,
) => void;

function healthCheck(address: string, service = ''): Promise<string> {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as GrpcClient & {
    Check: HealthCall;
  };
  return new Promise<string>((resolve, reject) =>
    client.Check({ service }, (error, response) => (error === null ? resolve(response!.status) : reject(error))),
  ).finally(() => client.close());
}

/** Statuses a Health.Watch stream reports, as they arrive. */
function healthWatch(address: string): { statuses: string[]; ended: Promise<void>; close(): void } {
  const client = new HealthClient(address, credentials.createInsecure()) as unknown as GrpcClient & {
    Watch: (request: { service: string }) => ClientReadableStream<{ status: string }>;
  };
  const statuses: string[] = [];
  const call = client.Watch({ service: '' });
  call.on('data', (response: { status: string }) => statuses.push(response.status));
  const ended = new Promise<void>((resolve) => {
    call.on('error', () => resolve());
    call.on('end', () => resolve());
  });
  return { statuses, ended, close: () => client.close() };
}

describe('startGrpcServer', () => {
  let running: RunningGrpcServer | undefined;
  afterEach(async () => {
    await running?.shutdown(0);
    running = undefined;
  });

  async function start() {
    const waiting = waitingService();
    running = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [waiting.registration] });
    return { waiting, address: `127.0.0.1:${running.port}`, server: running };
  }

  it('answers health checks SERVING for the server and each service', async () => {
    const { address } = await start();
    expect(await healthCheck(address)).toBe('SERVING');
    expect(await healthCheck(address, 'ledgerline.v1.MetadataStoreService')).toBe('SERVING');
  });

  it('turns health NOT_SERVING when shutdown begins', async () => {
    const { address, server } = await start();
    const watch = healthWatch(address);
    try {
      await eventually(() => watch.statuses.includes('SERVING'));
      // The watch is itself an in-flight call, so the drain runs into its bound.
      const outcome = await server.shutdown(200);
      await watch.ended;
      expect(watch.statuses).toEqual(['SERVING', 'NOT_SERVING']);
      // Closed at the bound, but it is no call of the registered services: nothing of theirs was cancelled.
      expect(outcome).toEqual({ forced: true, cancelledCalls: [] });
    } finally {
      watch.close();
    }
  });

  it('lists the registered services and health through server reflection', async () => {
    const { address } = await start();
    expect(await listServices(address)).toEqual(['grpc.health.v1.Health', 'ledgerline.v1.MetadataStoreService']);
  });

  it('serves the file descriptor of a registered service through reflection', async () => {
    const { address } = await start();
    const files = await fileContainingSymbol(address, 'ledgerline.v1.MetadataStoreService');
    const file = files.find((f) => f.name === 'ledgerline/v1/metadata.proto');
    expect(file?.service.map((s) => s.name)).toEqual(['MetadataStoreService']);
    expect(file?.service[0]?.method.map((m) => m.name)).toContain('Watch');
  });

  it('drains an in-flight call that finishes within the bound', async () => {
    const { address, server, waiting } = await start();
    const client = createClient(MetadataStoreService, address);
    try {
      const pending = client.get({ path: '/wait/300' });
      await eventually(() => waiting.started.length === 1);
      const outcome = await server.shutdown(10_000);
      expect(outcome.forced).toBe(false);
      expect(new TextDecoder().decode((await pending).node?.value)).toBe('/wait/300');
      expect(waiting.aborted).toHaveLength(0);
    } finally {
      closeClient(client);
    }
  });

  it('cancels an in-flight call that outlives the bound', async () => {
    const { address, server, waiting } = await start();
    const client = createClient(MetadataStoreService, address);
    try {
      const pending = client.get({ path: '/wait/30000' }).catch((error: unknown) => error);
      await eventually(() => waiting.started.length === 1);
      const outcome = await server.shutdown(100);
      expect(outcome).toEqual({ forced: true, cancelledCalls: ['/ledgerline.v1.MetadataStoreService/Get x1'] });
      const error = await pending;
      expect(error).toBeInstanceOf(LedgerlineError);
      expect(['CANCELLED', 'UNAVAILABLE']).toContain((error as LedgerlineError).code);
      await eventually(() => waiting.aborted.length === 1);
    } finally {
      closeClient(client);
    }
  });

  it('ends a watch when the drain begins, so the drain is clean and waits for no bound', async () => {
    const { address, server } = await start();
    const client = createClient(MetadataStoreService, address);
    try {
      const changes: string[] = [];
      const watching = (async () => {
        for await (const change of client.watch({ pathPrefix: '/until-drain' })) changes.push(change.path);
      })();
      await eventually(() => changes.length === 1);
      // Without the drain ending it, the watch would hold the server until this bound and be cancelled.
      const outcome = await server.shutdown(30_000);
      expect(outcome).toEqual({ forced: false, cancelledCalls: [] });
      await watching;
      expect(changes).toEqual(['/until-drain']);
    } finally {
      closeClient(client);
    }
  });

  it('refuses new calls once shutdown has begun', async () => {
    const { address, server } = await start();
    await server.shutdown(1000);
    const client = createClient(MetadataStoreService, address);
    try {
      await expect(client.get({ path: '/x' }, { deadlineMs: 2000 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      closeClient(client);
    }
  });
});
