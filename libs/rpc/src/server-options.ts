import { Server, ServerCredentials, type ChannelOptions } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { RpcReason } from './errors.js';

/** The largest message, in either direction, a server or client accepts unless configured otherwise. */
export const DEFAULT_MAX_MESSAGE_SIZE_BYTES = 4 * 1024 * 1024;
/** Concurrent calls one client connection may have open on a server. */
export const DEFAULT_MAX_CONCURRENT_STREAMS = 1024;

export interface GrpcLimits {
  /** Larger messages fail with RESOURCE_EXHAUSTED instead of being buffered. */
  maxMessageSizeBytes?: number;
  /** Calls beyond this per connection wait for a free slot (HTTP/2 flow control). */
  maxConcurrentStreams?: number;
}

/** `value` when it is an integer of at least `min` (1 unless given), else INVALID_ARGUMENT / BAD_LIMIT naming `name`. */
export function checkedInteger(value: number, name: string, min = 1): number {
  if (!Number.isInteger(value) || value < min) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      RpcReason.BAD_LIMIT,
      `${name} must be an integer of at least ${min}, got ${value}`,
    );
  }
  return value;
}

/** grpc-js channel options that enforce the message size bound in both directions. */
export function messageSizeOptions(maxMessageSizeBytes = DEFAULT_MAX_MESSAGE_SIZE_BYTES): ChannelOptions {
  const bytes = checkedInteger(maxMessageSizeBytes, 'maxMessageSizeBytes');
  return { 'grpc.max_receive_message_length': bytes, 'grpc.max_send_message_length': bytes };
}

/** A grpc-js server with every limit set. */
export function createGrpcServer(limits: GrpcLimits = {}): Server {
  return new Server({
    ...messageSizeOptions(limits.maxMessageSizeBytes),
    'grpc.max_concurrent_streams': checkedInteger(
      limits.maxConcurrentStreams ?? DEFAULT_MAX_CONCURRENT_STREAMS,
      'maxConcurrentStreams',
    ),
  });
}

/** Binds a server without TLS and resolves with the port it got (useful with port 0). */
export function bindInsecure(server: Server, host: string, port: number): Promise<number> {
  return bindServer(server, host, port, ServerCredentials.createInsecure());
}

/** The address a server is bound with (an IPv6 host in brackets): grpc-js names the bound port by it. */
export function bindAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Binds a server with the given credentials (TLS or not) and resolves with the port it got. */
export function bindServer(
  server: Server,
  host: string,
  port: number,
  credentials: ServerCredentials,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(bindAddress(host, port), credentials, (error, boundPort) => {
      if (error === null) resolve(boundPort);
      else
        reject(
          new LedgerlineError(
            'UNAVAILABLE',
            RpcReason.BIND_FAILED,
            `cannot listen on ${host}:${port}: ${error.message}`,
            {
              cause: error,
            },
          ),
        );
    });
  });
}
