import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { readOnlyClusterConfigSchema, startClusterReadOnlyOwner } from '@ledgerline/readonly-owner';
import { loadConfig } from '@ledgerline/service-kit';

// The cluster entry point (PIP-63): settings from LEDGERLINE_* variables (LEDGERLINE_METADATA_ADDRESS,
// LEDGERLINE_REDIS_URL, LEDGERLINE_NATS_URL, LEDGERLINE_GRPC_PORT, LEDGERLINE_ADVERTISED_ADDRESS,
// LEDGERLINE_OWNER_GROUP, LEDGERLINE_LAC_FALLBACK_MS, ...) with --flag overrides.
async function main(): Promise<void> {
  // grpc-js would log a failure to listen a second time; the service logs through pino. GRPC_VERBOSITY overrides.
  if (process.env['GRPC_VERBOSITY'] === undefined) setLogVerbosity(logVerbosity.NONE);
  const running = await startClusterReadOnlyOwner(loadConfig(readOnlyClusterConfigSchema));
  // One line for whoever started the process (tests and scripts wait for it).
  process.stdout.write(
    `read-only owner listening on ${running.owner.identity.advertisedAddress} port ${running.port}\n`,
  );
}

// One line on stderr and a non-zero status: 2 for invalid settings, 1 for anything else.
main().catch((thrown: unknown) => {
  const error = LedgerlineError.from(thrown);
  const message = `${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(`read-only owner failed to start: ${message}\n`);
  process.exit(error.reason === ErrorReason.INVALID_CONFIG ? 2 : 1);
});
