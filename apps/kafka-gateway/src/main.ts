import { logVerbosity, setLogVerbosity } from '@grpc/grpc-js';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { kafkaGatewayClusterConfigSchema, startClusterKafkaGateway } from '@ledgerline/kafka-gateway';
import { loadConfig } from '@ledgerline/service-kit';

// The cluster entry point: settings from LEDGERLINE_* variables (LEDGERLINE_METADATA_ADDRESS,
// LEDGERLINE_KAFKA_PORT, LEDGERLINE_KAFKA_ADVERTISED_ADDRESS, LEDGERLINE_KAFKA_TENANT,
// LEDGERLINE_KAFKA_NAMESPACE, ...) with --flag overrides.
async function main(): Promise<void> {
  // grpc-js would log a failure to listen a second time; the service logs through pino. GRPC_VERBOSITY overrides.
  if (process.env['GRPC_VERBOSITY'] === undefined) setLogVerbosity(logVerbosity.NONE);
  const running = await startClusterKafkaGateway(loadConfig(kafkaGatewayClusterConfigSchema));
  // One line for whoever started the process (tests and scripts wait for it).
  process.stdout.write(
    `kafka gateway listening on port ${running.gateway.port}, grpc port ${running.service.grpcPort}\n`,
  );
}

// One line on stderr and a non-zero status: 2 for invalid settings, 1 for anything else.
main().catch((thrown: unknown) => {
  const error = LedgerlineError.from(thrown);
  const message = `${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(`kafka gateway failed to start: ${message}\n`);
  process.exit(error.reason === ErrorReason.INVALID_CONFIG ? 2 : 1);
});
