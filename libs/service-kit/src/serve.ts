import type { Logger } from 'pino';
import { unexpectedRejection } from '@ledgerline/errors';
import { createLogger } from './logger.js';
import { createMetrics, startMetricsServer, type RunningMetricsServer, type ServiceMetrics } from './metrics.js';
import { startGrpcServer, type GrpcServiceRegistration, type RunningGrpcServer } from './grpc-server.js';
import type { ServiceConfig } from './service-config.js';
import { serviceSecurity, type ServiceSecurity } from './service-security.js';
import type { ChannelSettings, ClientOptions } from '@ledgerline/rpc';
import type { PolicySource } from '@ledgerline/security';

/** Something to close after the gRPC server has drained: a store, a bus connection. */
export interface Closer {
  name: string;
  close(): Promise<void> | void;
  /** How long this closer gets before shutdown moves on; the service's closeTimeoutMs when absent. */
  timeoutMs?: number;
}

export interface ServeOptions {
  /** The service name, in logs and as the `service` metrics label. */
  name: string;
  config: ServiceConfig;
  services: readonly GrpcServiceRegistration[];
  logger?: Logger;
  metrics?: ServiceMetrics;
  /** Closed in reverse order after the gRPC server has stopped. More can be added with addCloser. */
  closers?: readonly Closer[];
  /** Signals that start a graceful shutdown; defaults to SIGTERM and SIGINT. Pass [] to handle none. */
  signals?: readonly NodeJS.Signals[];
  /** Each closer gets this long before shutdown moves on (default 5000 ms). */
  closeTimeoutMs?: number;
  /**
   * Where namespace permissions and tenant admin roles are read when
   * authentication is on; without one, only super-users pass the checks that
   * need them.
   */
  authorizationPolicies?: PolicySource;
  /** Called once a signal-started shutdown is done; defaults to exiting with its code. */
  onSignalShutdown?: (report: ShutdownReport) => void;
}

export interface ShutdownReport {
  reason: string;
  /** In-flight calls outlived the drain bound and were cancelled. */
  forced: boolean;
  /** Names of closers that failed or timed out. */
  failedClosers: string[];
}

export interface RunningService {
  readonly name: string;
  readonly grpcPort: number;
  readonly metricsPort: number;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  readonly grpc: RunningGrpcServer;
  /**
   * Settings for channels to other services: TLS and this service's
   * certificate when TLS is configured, plaintext otherwise. Pass them to
   * createChannel/createClient so mutual TLS needs no code in the service.
   */
  readonly channelSettings: ChannelSettings;
  /** Client options for calls this process makes to its own port: they pass authentication without a token. */
  readonly selfClientOptions: ClientOptions;
  /** What is on and what is open (TLS, mutual TLS, authentication), as the start-up log says it. */
  readonly securitySummary: string;
  addCloser(closer: Closer): void;
  /** Graceful shutdown; calling it again returns the same promise. */
  shutdown(reason?: string): Promise<ShutdownReport>;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

async function runCloser(closer: Closer, timeoutMs: number, logger: Logger): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not close within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([Promise.resolve().then(() => closer.close()), timeout]);
    logger.info({ closer: closer.name }, 'closed');
    return true;
  } catch (error) {
    logger.error({ closer: closer.name, err: error }, 'close failed');
    return false;
  } finally {
    clearTimeout(timer);
  }
}

interface Servers {
  grpc: RunningGrpcServer;
  metricsServer: RunningMetricsServer;
  security: ServiceSecurity;
}

async function startServers(
  options: ServeOptions,
  logger: Logger,
  metrics: ServiceMetrics,
  isServing: () => boolean,
): Promise<Servers> {
  const { config } = options;
  const security = await serviceSecurity(config, logger, metrics, options.authorizationPolicies);
  let grpc: RunningGrpcServer;
  try {
    grpc = await startGrpcServer({
      host: config.grpcHost,
      port: config.grpcPort,
      maxMessageSizeBytes: config.maxMessageSizeBytes,
      services: options.services,
      ...(security.credentials === undefined ? {} : { credentials: security.credentials }),
      ...(security.authorize === undefined ? {} : { authorize: security.authorize }),
      onCallEnd: (info) => {
        metrics.onCallEnd(info);
        if (info.code === 'INTERNAL' || info.code === 'UNKNOWN') {
          logger.error({ err: info.error, method: info.method }, 'call failed');
        }
      },
    });
  } catch (error) {
    security.close();
    throw error;
  }
  try {
    const metricsServer = await startMetricsServer({
      host: config.metricsHost,
      port: config.metricsPort,
      registry: metrics.registry,
      isServing,
    });
    return { grpc, metricsServer, security };
  } catch (error) {
    grpc.server.forceShutdown();
    security.close();
    throw error;
  }
}

/** Drains the gRPC server, then runs the closers newest first, then stops the metrics server. */
async function stopServers(
  servers: Servers,
  closers: readonly Closer[],
  options: ServeOptions,
  logger: Logger,
  reason: string,
): Promise<ShutdownReport> {
  const { drainTimeoutMs } = options.config;
  logger.info({ reason, drainTimeoutMs }, 'shutting down');
  const outcome = await servers.grpc.shutdown(drainTimeoutMs);
  // Only cancelled calls of ours make the stop unclean: a connection left without one (a health
  // Watch, or one accepted as shutdown began) loses nothing when it is closed at the bound.
  const forced = outcome.cancelledCalls.length > 0;
  if (forced) {
    logger.warn(
      { drainTimeoutMs, cancelledCalls: outcome.cancelledCalls },
      'in-flight calls cancelled after the drain bound',
    );
  } else if (outcome.forced) {
    logger.info({ drainTimeoutMs }, 'connections without calls in flight closed after the drain bound');
  }
  const failedClosers: string[] = [];
  for (const closer of [...closers].reverse()) {
    if (!(await runCloser(closer, closer.timeoutMs ?? options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS, logger))) {
      failedClosers.push(closer.name);
    }
  }
  await servers.metricsServer.close();
  servers.security.close();
  // An unclean stop exits 1: say why at a level an operator running at warn still sees.
  const clean = !forced && failedClosers.length === 0;
  logger[clean ? 'info' : 'warn']({ forced, failedClosers }, clean ? 'stopped' : 'stopped uncleanly');
  return { reason, forced, failedClosers };
}

/**
 * Runs a service: the gRPC server (with health and reflection), the metrics
 * HTTP server, and a graceful shutdown on SIGTERM/SIGINT that marks the
 * server NOT_SERVING, drains in-flight calls for at most drainTimeoutMs,
 * cancels the rest, then runs the closers (stores, bus) newest first.
 */
export async function serve(options: ServeOptions): Promise<RunningService> {
  const logger =
    options.logger ?? createLogger(options.name, { level: options.config.logLevel, format: options.config.logFormat });
  const metrics = options.metrics ?? createMetrics(options.name);
  const closers = [...(options.closers ?? [])];
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let shuttingDown: Promise<ShutdownReport> | undefined;
  const servers = await startServers(options, logger, metrics, () => shuttingDown === undefined);

  const shutdown = (reason = 'requested'): Promise<ShutdownReport> =>
    (shuttingDown ??= stopServers(servers, closers, options, logger, reason).finally(() => {
      for (const signal of signals) process.off(signal, onSignal);
    }));
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shuttingDown !== undefined) {
      // A second signal means the operator will not wait for the drain.
      logger.warn({ signal }, 'second signal during shutdown: exiting now');
      process.exit(1);
    }
    shutdown(signal)
      .then(options.onSignalShutdown ?? exitWith)
      .catch(unexpectedRejection);
  };
  for (const signal of signals) process.on(signal, onSignal);

  logger.info(
    { grpcPort: servers.grpc.port, metricsPort: servers.metricsServer.port, security: servers.security.summary },
    'serving',
  );
  return {
    name: options.name,
    grpcPort: servers.grpc.port,
    metricsPort: servers.metricsServer.port,
    logger,
    metrics,
    grpc: servers.grpc,
    channelSettings: servers.security.channel,
    selfClientOptions: servers.security.selfClient,
    securitySummary: servers.security.summary,
    addCloser: (closer) => closers.push(closer),
    shutdown,
  };
}

/** A clean shutdown exits 0; one that had to cancel calls or failed to close something exits 1. */
function exitWith(report: ShutdownReport): void {
  process.exit(report.forced || report.failedClosers.length > 0 ? 1 : 0);
}
