import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@ledgerline/service-kit';
import { freePort } from '@ledgerline/testing';
import { standaloneServerConfigSchema, startStandalone, type RunningStandalone } from './standalone.js';

/*
 * A second standalone given only another --grpc-port must start beside the
 * first: every other port it opens (metrics, the read-only owner's) defaults
 * to a free one. With fixed defaults the second failed with BIND_FAILED on
 * the read-only owner's port.
 */
describe('two standalones side by side', () => {
  let dir: string;
  const running: RunningStandalone[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-two-standalones-'));
  });
  afterAll(async () => {
    await Promise.all(running.map((standalone) => standalone.shutdown('test finished')));
    rmSync(dir, { recursive: true, force: true });
  });

  async function startWithGrpcPortOnly(name: string): Promise<RunningStandalone> {
    const port = await freePort();
    const config = loadConfig(standaloneServerConfigSchema, {
      env: {},
      argv: ['--grpc-port', String(port), '--data-dir', join(dir, name), '--log-level', 'silent'],
    });
    const standalone = await startStandalone(config, { signals: [] });
    running.push(standalone);
    return standalone;
  }

  it('start with only --grpc-port told apart, and each serves its own metrics', async () => {
    const first = await startWithGrpcPortOnly('first');
    const second = await startWithGrpcPortOnly('second');
    const ports = [first, second].flatMap((s) => [s.grpcPort, s.metricsPort, s.readOnly.port]);
    expect(new Set(ports).size).toBe(6);
    for (const standalone of [first, second]) {
      const metrics = await fetch(`http://127.0.0.1:${standalone.metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      await metrics.text();
    }
  });
});
