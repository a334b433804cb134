import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MetadataStoreService } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';

const root = join(__dirname, '..', '..', '..');

function startService(): { child: ChildProcess; logs: Record<string, unknown>[]; ready: Promise<number> } {
  const child = spawn(
    join(root, 'node_modules', '.bin', 'tsx'),
    [
      join(__dirname, 'testing', 'serve-main.ts'),
      '--grpc-host',
      '127.0.0.1',
      '--grpc-port',
      '0',
      '--metrics-port',
      '0',
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LEDGERLINE_METRICS_HOST: '127.0.0.1' } },
  );
  const logs: Record<string, unknown>[] = [];
  const ready = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logs.push(entry);
      if (entry.msg === 'ready') resolve(entry.grpcPort as number);
    });
    child.once('exit', (code) => reject(new Error(`the service exited with ${code} before it was ready`)));
  });
  return { child, logs, ready };
}

describe('a service process', () => {
  it('drains in-flight calls, closes its stores and exits 0 on SIGTERM', async () => {
    const { child, logs, ready } = startService();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const port = await ready;
      const client = createClient(MetadataStoreService, `127.0.0.1:${port}`);
      try {
        const pending = client.get({ path: '/wait/400' });
        // The call has reached the handler once the server has answered a later one.
        await client.get({ path: '/wait/0' });
        child.kill('SIGTERM');
        const response = await pending;
        expect(new TextDecoder().decode(response.node?.value)).toBe('/wait/400');
      } finally {
        closeClient(client);
      }
      expect(await exited).toBe(0);
      const messages = logs.map((entry) => entry.msg);
      expect(messages).toEqual(expect.arrayContaining(['shutting down', 'pretend store closed', 'stopped']));
      expect(messages.indexOf('pretend store closed')).toBeGreaterThan(messages.indexOf('shutting down'));
      expect(logs.find((entry) => entry.msg === 'stopped')).toMatchObject({ forced: false, failedClosers: [] });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
