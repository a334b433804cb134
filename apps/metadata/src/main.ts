import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { runClusterMetadataService } from '@ledgerline/metadata-service';

// The cluster entry point: settings from LEDGERLINE_* variables (LEDGERLINE_REDIS_URL,
// LEDGERLINE_NATS_URL, LEDGERLINE_GRPC_PORT, ...) with --flag overrides.
async function main(): Promise<void> {
  // grpc-js would log a failure to listen a second time; the service logs through pino. GRPC_VERBOSITY overrides.
  if (process.env['GRPC_VERBOSITY'] === undefined) setLogVerbosity(logVerbosity.NONE);
  await runClusterMetadataService(process.argv.slice(2));
}

// One line on stderr and a non-zero status: 2 for invalid settings, 1 for anything else (a store or bus
// that cannot be reached, a port in use). `ledgerline metadata` runs the same runClusterMetadataService.
main().catch((thrown: unknown) => {
  const error = LedgerlineError.from(thrown);
  const message = `${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(`metadata service failed to start: ${message}\n`);
  process.exit(error.reason === ErrorReason.INVALID_CONFIG ? 2 : 1);
});
