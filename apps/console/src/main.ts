import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { clusterConsoleConfigSchema, startClusterConsole } from '@ledgerline/console';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { loadConfig } from '@ledgerline/service-kit';

// The cluster entry point: settings from LEDGERLINE_* variables (LEDGERLINE_METADATA_ADDRESS,
// LEDGERLINE_COLLECTOR_ADDRESS, LEDGERLINE_KAFKA_ADDRESS, LEDGERLINE_CONSOLE_PORT, ...) with --flag overrides.
async function main(): Promise<void> {
  // grpc-js would log a failure to listen a second time; the service logs through pino. GRPC_VERBOSITY overrides.
  if (process.env['GRPC_VERBOSITY'] === undefined) setLogVerbosity(logVerbosity.NONE);
  await startClusterConsole(loadConfig(clusterConsoleConfigSchema));
}

// One line on stderr and a non-zero status: 2 for invalid settings, 1 for anything else, as the other services do.
main().catch((thrown: unknown) => {
  const error = LedgerlineError.from(thrown);
  const message = `${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(`console failed to start: ${message}\n`);
  process.exit(error.reason === ErrorReason.INVALID_CONFIG ? 2 : 1);
});
