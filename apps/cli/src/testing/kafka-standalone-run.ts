import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import type { RunningStandalone } from '../standalone.js';
import { startTestStandalone } from './test-standalone.js';

/** A standalone with its Kafka listener for a spec of Kafka clients, and an SDK client of it. */
export interface KafkaStandaloneRun {
  standalone: RunningStandalone;
  client: LedgerlineClient;
  /** host:port of the Kafka listener. */
  broker: string;
}

/**
 * Registers a spec's standalone: started (groups rebalance without the
 * initial delay) before the spec's tests, shut down and its folder removed
 * after them. The fields are set once beforeAll ran.
 */
export function kafkaStandaloneRun(name: string): KafkaStandaloneRun {
  const run = {} as KafkaStandaloneRun;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `ledgerline-${name}-`));
    run.standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--group-initial-rebalance-delay-ms',
      '0',
    ]);
    run.broker = `127.0.0.1:${run.standalone.kafka!.port}`;
    run.client = createClient({ serviceUrl: `127.0.0.1:${run.standalone.grpcPort}` });
  });
  afterAll(async () => {
    await run.client?.close();
    await run.standalone?.shutdown('test over');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return run;
}
