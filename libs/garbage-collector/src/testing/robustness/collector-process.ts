/*
 * One garbage-collector instance as its own process, for the robustness
 * history: metadata over the metadata service's gRPC API, the shared SQLite
 * ledger store behind a wrapper that fails a share of deletes, hints on NATS.
 * Prints one JSON line once started; the test stops it with SIGKILL.
 */
import { createBus, type Bus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { GarbageCollector } from '../../collector.js';
import { GrpcCollectorMetadata } from '../../collector-metadata.js';
import type { CollectorConfigInput } from '../../config.js';
import { FailingDeletes } from '../failing-deletes.js';

interface Args {
  metadataAddress: string;
  ledgersPath: string;
  natsUrl?: string;
  instanceId: string;
  failureRate: number;
  config: CollectorConfigInput;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args;
  const ledgerStore = new FailingDeletes(new SqliteLedgerStore({ path: args.ledgersPath, synchronous: 'NORMAL' }));
  ledgerStore.failureRate = args.failureRate;
  let bus: Bus | undefined;
  if (args.natsUrl !== undefined) bus = await createBus({ kind: 'nats', servers: args.natsUrl, name: args.instanceId });
  const collector = new GarbageCollector({
    metadata: GrpcCollectorMetadata.connect(args.metadataAddress, 5_000),
    ledgerStore,
    ...(bus === undefined ? {} : { bus }),
    config: args.config,
    instanceId: args.instanceId,
    logger: {
      info() {},
      warn() {},
      error: (details, message) => process.stderr.write(`${args.instanceId}: ${message} ${JSON.stringify(details)}\n`),
    },
  });
  await collector.start();
  process.stdout.write(`${JSON.stringify({ started: args.instanceId })}\n`);
  // Stay up until killed; the timers are unref'd, so hold the process open.
  setInterval(() => undefined, 1_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`collector process failed: ${String(error)}\n`);
  process.exit(1);
});
