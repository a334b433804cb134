import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { clusterCollectorConfigSchema, startClusterCollector } from '@ledgerline/garbage-collector';
import { loadConfig } from '@ledgerline/service-kit';

// The cluster entry point: settings from LEDGERLINE_* variables (LEDGERLINE_METADATA_ADDRESS,
// LEDGERLINE_LEDGER_REDIS_URL, LEDGERLINE_NATS_URL, LEDGERLINE_GC_INTERVAL_MS, ...) with --flag overrides.
async function main(): Promise<void> {
  // grpc-js would log a failure to listen a second time; the service logs through pino. GRPC_VERBOSITY overrides.
  if (process.env['GRPC_VERBOSITY'] === undefined) setLogVerbosity(logVerbosity.NONE);
  await startClusterCollector(loadConfig(clusterCollectorConfigSchema));
}

// One line on stderr and a non-zero status: 2 for invalid settings, 1 for anything else, as the metadata service does.
main().catch((thrown: unknown) => {
  const error = LedgerlineError.from(thrown);
  const message = `${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(`garbage collector failed to start: ${message}\n`);
  process.exit(error.reason === ErrorReason.INVALID_CONFIG ? 2 : 1);
});
