import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CallEndInfo } from '@ledgerline/rpc';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A service's metrics: its own registry (never the global one) and the gRPC call metrics. */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Feeds the gRPC call metrics; pass it as the server's onCallEnd hook. */
  readonly onCallEnd: (info: CallEndInfo) => void;
  /** Counts a call refused by authentication or authorization, by method and reason. */
  readonly onRefused: (method: string, reason: string) => void;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); on by default. */
  defaultMetrics?: boolean;
}

/** Creates the registry of one service, labelled with its name. */
export function createMetrics(service: string, options: MetricsOptions = {}): ServiceMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const handled = new Counter({
    name: 'ledgerline_grpc_server_handled_total',
    help: 'gRPC calls finished by the server, by method and status code.',
    labelNames: ['method', 'code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'ledgerline_grpc_server_handling_seconds',
    help: 'Time from the start of a gRPC call to its status, by method.',
    labelNames: ['method'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const refused = new Counter({
    name: 'ledgerline_grpc_server_refused_total',
    help: 'gRPC calls refused by authentication or authorization, by method and reason.',
    labelNames: ['method', 'reason'] as const,
    registers: [registry],
  });
  return {
    registry,
    onRefused: (method, reason) => refused.inc({ method, reason }),
    onCallEnd: (info) => {
      handled.inc({ method: info.method, code: info.code });
      duration.observe({ method: info.method }, info.durationMs / 1000);
    },
  };
}

export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  registry: Registry;
  /** /healthz answers 200 while this is true and 503 once shutdown has begun. */
  isServing: () => boolean;
}

export interface RunningMetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Connections the metrics endpoint keeps at once; scrapers and probes need a handful. */
const MAX_METRICS_CONNECTIONS = 32;
const METRICS_REQUEST_TIMEOUT_MS = 10_000;

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Serves /metrics (Prometheus text) and /healthz over HTTP. */
export async function startMetricsServer(options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error)),
      );
    } else if (path === '/healthz') {
      const serving = options.isServing();
      response
        .writeHead(serving ? 200 : 503, { 'content-type': 'text/plain' })
        .end(serving ? 'ok\n' : 'shutting down\n');
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics or /healthz\n');
    }
  });
  server.maxConnections = MAX_METRICS_CONNECTIONS;
  server.requestTimeout = METRICS_REQUEST_TIMEOUT_MS;
  server.headersTimeout = METRICS_REQUEST_TIMEOUT_MS;
  const port = await listen(server, options.host, options.port);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
