import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refusal } from '@ledgerline/testing';
import { callRunner, serveControl } from './control.js';
import type { PodRunner } from './pod-runner.js';

/* The control socket later `cluster ...` commands reach a running pod runner through, over a stand-in runner. */
describe('the pod runner control socket', () => {
  let runDir: string;
  let server: Server;
  const drains: Array<{ pods: readonly string[]; timeoutMs: number }> = [];
  beforeAll(async () => {
    runDir = mkdtempSync(join(tmpdir(), 'ledgerline-control-'));
    const runner = {
      runDir,
      prefix: 'llprtest',
      subnet: '10.213.1',
      drain: async (pods: readonly string[], timeoutMs: number) => {
        drains.push({ pods, timeoutMs });
        return pods.map((pod) => `evicted ${pod}`);
      },
    };
    server = await serveControl(runner as unknown as PodRunner, 'deploy/overlays/dev', async () => undefined);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(runDir, { recursive: true, force: true });
  });

  it('passes a drain its pods and bound, and answers its lines', async () => {
    expect(await callRunner(runDir, 'drain', ['5000', 'a', 'b'])).toEqual(['evicted a', 'evicted b']);
    expect(drains.at(-1)).toEqual({ pods: ['a', 'b'], timeoutMs: 5000 });
  });

  it.each(['abc', '0', '-5', '1.5', '3600001'])(
    'refuses a drain bound of %s before evicting anything',
    async (bound) => {
      const before = drains.length;
      const refused = await refusal(callRunner(runDir, 'drain', [bound, 'a']));
      expect(refused.code).toBe('INVALID_ARGUMENT');
      expect(refused.message).toContain(`not ${bound}`);
      expect(drains).toHaveLength(before);
    },
  );

  it('refuses an unknown command', async () => {
    expect((await refusal(callRunner(runDir, 'evict-everything'))).message).toContain(
      'unknown command evict-everything',
    );
  });
});
