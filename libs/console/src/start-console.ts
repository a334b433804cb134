import {
  serve,
  serviceChannel,
  serviceTokenVerifier,
  type Logger,
  type RunningService,
  type ServiceConfig,
} from '@ledgerline/service-kit';
import { ConsoleBackends, type ConsoleBackendsOptions } from './backends.js';
import type { ConsoleContext } from './console-context.js';
import { startConsoleServer, type RunningConsoleServer } from './console-server.js';
import type { ClusterConsoleConfig } from './settings.js';

/** The console's version, shown by WhoAmI: the package's. */
export const CONSOLE_VERSION = '0.1.0';

export interface ConsoleOptions {
  /** The deployment's security settings: the same token verifier and super-user roles the services use. */
  config: ServiceConfig & {
    consolePort: number;
    consoleHost: string;
    consoleWebRoot: string;
    consoleCallDeadlineMs: number;
  };
  backends: Omit<ConsoleBackendsOptions, 'channelSettings'>;
  mode: 'standalone' | 'cluster';
  logger: Logger;
}

export interface RunningConsole {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Starts the console: its channels to the services (with the deployment's
 * TLS settings) and its HTTP server. Standalone calls this with its own
 * ports; the console app with the cluster's addresses.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { config } = options;
  const channel = serviceChannel(config);
  const backends = new ConsoleBackends({ ...options.backends, channelSettings: channel.settings });
  const superUserRoles = config.superUserRoles
    .split(',')
    .map((role) => role.trim())
    .filter((role) => role !== '');
  const context: ConsoleContext = {
    backends,
    tokenVerifier: await serviceTokenVerifier(config),
    superUserRoles,
    presentsServiceCertificate: config.tlsCert !== undefined && config.tlsCa !== undefined,
    mode: options.mode,
    version: CONSOLE_VERSION,
    callDeadlineMs: config.consoleCallDeadlineMs,
  };
  let server: RunningConsoleServer;
  try {
    server = await startConsoleServer({
      context,
      host: config.consoleHost,
      port: config.consolePort,
      webRoot: config.consoleWebRoot,
      onInternalError: (error, procedure) =>
        options.logger.error({ procedure, reason: error.reason, error: error.message }, 'console call failed'),
    });
  } catch (error) {
    backends.close();
    channel.close();
    throw error;
  }
  return {
    port: server.port,
    async close() {
      await server.close();
      backends.close();
      channel.close();
    },
  };
}

/** The console app, and the gRPC side every service has (health, reflection, metrics, signals, drain). */
export interface RunningClusterConsole {
  readonly service: RunningService;
  readonly console: RunningConsole;
}

/**
 * The console app in a cluster: the services by address (LEDGERLINE_*
 * settings), and, on its gRPC port, only health and reflection (as the Kafka
 * gateway has), so probes, `ledgerline cluster` and the drain on SIGTERM treat
 * it as every other service; it logs "console listening" once it serves.
 */
export async function startClusterConsole(
  config: ClusterConsoleConfig,
  options: { signals?: readonly NodeJS.Signals[] } = {},
): Promise<RunningClusterConsole> {
  const service = await serve({
    name: 'console',
    config,
    services: [],
    ...(options.signals === undefined ? {} : { signals: options.signals }),
  });
  try {
    const running = await startConsole({
      config,
      mode: 'cluster',
      logger: service.logger,
      backends: {
        metadataAddress: config.metadataAddress,
        ...(config.collectorAddress === undefined ? {} : { collectorAddress: config.collectorAddress }),
        ...(config.kafkaAddress === undefined ? {} : { kafkaAddress: config.kafkaAddress }),
      },
    });
    service.addCloser({ name: 'console-http', close: () => running.close() });
    service.logger.info({ consolePort: running.port, metadataAddress: config.metadataAddress }, 'console listening');
    return { service, console: running };
  } catch (error) {
    await service.shutdown('the console did not start');
    throw error;
  }
}
