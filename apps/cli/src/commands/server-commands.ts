import { clusterConfigSchema, runClusterMetadataService } from '@ledgerline/metadata-service';
import { loadConfig, settingsHelp } from '@ledgerline/service-kit';
import type { Command } from 'commander';
import { CliExit, reportError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { standaloneServerConfigSchema, startStandalone } from '../standalone.js';
import { STANDALONE_NAMESPACE, standaloneNamespaceLine } from '../standalone-namespace.js';
import { descriptionOf } from '../command-index.js';

/**
 * A server command's settings as flags. The program's global --tls-ca,
 * --tls-cert and --tls-key (a client's) are parsed before the command sees
 * them, so they are handed back: for a server they name its own files.
 * `--auth` is the short form of --auth-enabled Pulsar users expect.
 */
export function serverArgv(command: Command): string[] {
  const globals = command.optsWithGlobals() as { tlsCa?: string; tlsCert?: string; tlsKey?: string };
  const argv = command.args.map((arg) => (arg === '--auth' ? '--auth-enabled' : arg));
  if (globals.tlsCert !== undefined) argv.push('--tls-cert', globals.tlsCert);
  if (globals.tlsKey !== undefined) argv.push('--tls-key', globals.tlsKey);
  if (globals.tlsCa !== undefined) argv.push('--tls-ca', globals.tlsCa);
  return argv;
}

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
    .description(descriptionOf('standalone'))
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption('-h, --help', 'list every setting, its environment variable and its default')
    .addHelpText('after', () => `\n${settingsHelp(standaloneServerConfigSchema)}\n  --auth is short for --auth-enabled`)
    .action(async (_options: unknown, command: Command) => {
      try {
        const config = loadConfig(standaloneServerConfigSchema, { argv: serverArgv(command) });
        const running = await startStandalone(config);
        const host = hostForPeople(config.grpcHost);
        io.out(
          `Ledgerline standalone is listening on ${host}:${running.grpcPort} (gRPC: topics, cursors, admin, lookup, metadata store, garbage collector, health, reflection)`,
        );
        io.out(
          `  read-only owner (PIP-63, group ${config.readOnlyOwnerGroup}): ${host}:${running.readOnly.port} (--read-only-grpc-port; consume with --group ${config.readOnlyOwnerGroup})`,
        );
        io.out(
          `  metrics: http://${hostForPeople(config.metricsHost)}:${running.metricsPort}/metrics (--metrics-port)`,
        );
        io.out(
          running.kafka === undefined
            ? `  kafka:   off (${config.kafkaEnabled ? `port ${config.kafkaPort} is taken; ` : ''}--kafka-port, --kafka-enabled)`
            : `  kafka:   ${hostForPeople(config.kafkaHost)}:${running.kafka.port} (--kafka-port; --kafka-enabled false turns it off)`,
        );
        io.out(
          running.console === undefined
            ? `  console: off (${config.consoleEnabled ? `port ${config.consolePort} is taken; ` : ''}--console-port, --console-enabled)`
            : `  console: http://${hostForPeople(config.consoleHost)}:${running.console.port}/ (--console-port; --console-enabled false turns it off)`,
        );
        io.out(`  data:    ${running.dataDir}`);
        io.out(`  security: ${running.writer.service.securitySummary}`);
        io.out(`  namespace: ${await standaloneNamespaceLine(running.admin)}`);
        io.out(
          `  try:     npx ledgerline produce ${STANDALONE_NAMESPACE}/my-topic -m hello --url ${host}:${running.grpcPort}`,
        );
        io.out(
          `           npx ledgerline read ${STANDALONE_NAMESPACE}/my-topic --offset 0 --url ${host}:${running.grpcPort}`,
        );
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
    });
  program
    .command('metadata')
    .description(descriptionOf('metadata'))
    .allowUnknownOption()
    .allowExcessArguments()
    .helpOption('-h, --help', 'list every setting, its environment variable and its default')
    .addHelpText('after', () => `\n${settingsHelp(clusterConfigSchema)}`)
    .action(async (_options: unknown, command: Command) => {
      try {
        // The same code path as the cluster entry point, apps/metadata/src/main.ts.
        const { config, running } = await runClusterMetadataService(serverArgv(command));
        io.out(`Ledgerline metadata service is listening on ${hostForPeople(config.grpcHost)}:${running.port}`);
      } catch (error) {
        throw new CliExit(reportError(io, error));
      }
    });
}
