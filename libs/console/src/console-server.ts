import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { LedgerlineError } from '@ledgerline/errors';
import { ConsoleService } from '@ledgerline/proto';
import type { ConsoleContext } from './console-context.js';
import { errorInterceptor } from './connect-errors.js';
import { consoleServiceImpl } from './console-service.js';
import { MAX_REQUEST_BYTES } from './limits.js';
import { requestPath, staticFiles } from './static-files.js';

/** Browser connections the console keeps at once. */
const MAX_CONNECTIONS = 1_024;
/** A request that has not arrived whole after this long is dropped (slow-loris). */
const REQUEST_TIMEOUT_MS = 60_000;

export interface ConsoleServerOptions {
  context: ConsoleContext;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The built front-end (index.html and its assets). */
  webRoot: string;
  /** Reports a failure that is the console's own bug (an INTERNAL answer). */
  onInternalError?: (error: LedgerlineError, procedure: string) => void;
}

export interface RunningConsoleServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The console's HTTP/1.1 server: ConsoleService over the Connect protocol
 * (JSON or binary, as a browser's connect-web transport sends) under
 * /ledgerline.v1.ConsoleService/, /healthz for probes, and the front-end's
 * files for every other GET.
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<RunningConsoleServer> {
  const files = staticFiles(options.webRoot);
  const api = connectNodeAdapter({
    routes: (router) => router.service(ConsoleService, consoleServiceImpl(options.context)),
    interceptors: [errorInterceptor((error, procedure) => options.onInternalError?.(error, procedure))],
    readMaxBytes: MAX_REQUEST_BYTES,
    // An HTTP/1.1 server hands the fallback Node's own request and response types.
    fallback: (request, response) => {
      serveOther(request as IncomingMessage, response as ServerResponse, files).catch(() => response.destroy());
    },
  });
  const server = createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, api);
  server.maxConnections = MAX_CONNECTIONS;
  const port = await listen(server, options.host, options.port);
  return {
    port,
    close: () => close(server),
  };
}

async function serveOther(
  request: IncomingMessage,
  response: ServerResponse,
  files: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
): Promise<void> {
  if (requestPath(request.url) === '/healthz') {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    return;
  }
  await files(request, response).catch(() => {
    if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
    response.end('the file could not be read\n');
  });
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Stops accepting, lets requests in flight finish, and drops idle keep-alive connections. */
function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
