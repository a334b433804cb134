import { loadConfig } from '@ledgerline/service-kit';
import { clusterConfigSchema, startClusterMetadataService } from '@ledgerline/metadata-service';

// The cluster entry point: settings from LEDGERLINE_* variables (LEDGERLINE_REDIS_URL,
// LEDGERLINE_NATS_URL, LEDGERLINE_GRPC_PORT, ...) with --flag overrides.
startClusterMetadataService(loadConfig(clusterConfigSchema)).catch((error: unknown) => {
  const failure = error as { code?: string; reason?: string; message?: string };
  process.stderr.write(
    `metadata service failed to start: ${failure.code ?? ''} ${failure.reason ?? ''}: ${failure.message ?? String(error)}\n`,
  );
  process.exit(1);
});
