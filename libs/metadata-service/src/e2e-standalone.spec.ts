import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { serviceConfigSchema } from '@ledgerline/service-kit';
import { metadataE2ESuite } from './testing/e2e-suite.js';
import { startMetadataService } from './metadata-server.js';

describe('metadata service end to end: standalone (SQLite, in-process bus)', () => {
  metadataE2ESuite(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-e2e-'));
    const bus = new InProcessBus();
    const store = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'normal' });
    const config = {
      ...serviceConfigSchema.parse({
        grpcHost: '127.0.0.1',
        grpcPort: 0,
        metricsHost: '127.0.0.1',
        metricsPort: 0,
        logLevel: 'silent',
      }),
      reconcileIntervalMs: 3_600_000,
      recountSettleMs: 30_000,
      ownerSweepIntervalMs: 1000,
    };
    const running = await startMetadataService({ store, bus, config, signals: [] });
    return {
      addresses: [`127.0.0.1:${running.port}`],
      async close() {
        await running.shutdown('test finished');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
