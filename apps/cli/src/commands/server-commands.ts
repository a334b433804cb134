import { runClusterMetadataService } from '@ledgerline/metadata-service';
import { loadConfig } from '@ledgerline/service-kit';
import type { Command } from 'commander';
import { CliExit, reportError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { standaloneServerConfigSchema, startStandalone } from '../standalone.js';

function hostForPeople(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host;
}

/**
 * `ledgerline standalone` and `ledgerline metadata`. Their settings come from
 * LEDGERLINE_* environment variables with `--flag value` overrides, validated
 * by the service's schema (so the flags are exactly the service's settings).
 */
export function registerServerCommands(program: Command, io: CliIo): void {
  program
    .command('standalone')
    .description('run Ledgerline in this process: embedded SQLite under ./data, in-process bus, one gRPC port')
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(
      '-h, --help',
      'settings: --data-dir, --grpc-host, --grpc-port, --metrics-port, --log-level, --lease-ttl-ms, ... (or LEDGERLINE_* variables)',
    )
    .action(async (_options: unknown, command: Command) => {
      try {
        const config = loadConfig(standaloneServerConfigSchema, { argv: command.args });
        const running = await startStandalone(config);
        const host = hostForPeople(config.grpcHost);
        io.out(
          `Ledgerline standalone is listening on ${host}:${running.grpcPort} (gRPC: topics, cursors, admin, lookup, metadata store, garbage collector, health, reflection)`,
        );
        io.out(
          `  read-only owner (PIP-63, group ${config.readOnlyOwnerGroup}): ${host}:${running.readOnly.port} (consume with --group ${config.readOnlyOwnerGroup})`,
        );
        io.out(`  metrics: http://${hostForPeople(config.metricsHost)}:${running.metricsPort}/metrics`);
        io.out(`  data:    ${running.dataDir}`);
        io.out(`  try:     npx tsx apps/cli/src/main.ts tenants create my-tenant --url ${host}:${running.grpcPort}`);
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
    });
  program
    .command('metadata')
    .description(
      'run the metadata service of a cluster (LEDGERLINE_REDIS_URL, LEDGERLINE_NATS_URL), as apps/metadata does',
    )
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption(
      '-h, --help',
      'settings: --redis-url, --nats-url, --grpc-port, --metrics-port, ... (or LEDGERLINE_* variables)',
    )
    .action(async (_options: unknown, command: Command) => {
      try {
        // The same code path as the cluster entry point, apps/metadata/src/main.ts.
        const { config, running } = await runClusterMetadataService(command.args);
        io.out(`Ledgerline metadata service is listening on ${hostForPeople(config.grpcHost)}:${running.port}`);
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
    });
}
