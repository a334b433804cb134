import type { DescService } from '@bufbuild/protobuf';
import {
  Channel,
  Client as GrpcClient,
  credentials as grpcCredentials,
  type ChannelCredentials,
  type ChannelOptions,
} from '@grpc/grpc-js';
import {
  bidiStreamingCall,
  clientStreamingCall,
  serverStreamingCall,
  unaryCall,
  type CallDefaults,
} from './client-calls.js';
import type { Client } from './method-types.js';
import { keepaliveOptions, type KeepaliveSettings } from './keepalive.js';
import { messageSizeOptions } from './server-options.js';

export interface ChannelSettings extends KeepaliveSettings {
  /** Defaults to no TLS: services talk inside a trusted network or over loopback. */
  credentials?: ChannelCredentials;
  /** Larger messages fail with RESOURCE_EXHAUSTED. Defaults to DEFAULT_MAX_MESSAGE_SIZE_BYTES. */
  maxMessageSizeBytes?: number;
  /** Further grpc-js channel options (load balancing and the like); they win over the settings above. */
  channelOptions?: ChannelOptions;
}

export interface ClientOptions extends ChannelSettings, CallDefaults {}

/**
 * Longest wait between reconnect attempts to a peer that cannot be reached.
 * grpc-js grows its backoff to 120 s, so a channel that failed while its peer
 * restarted (pods coming up together, a rolling restart) could fail calls for
 * minutes after the peer was back; inside a cluster a few seconds is enough.
 */
export const MAX_RECONNECT_BACKOFF_MS = 5_000;

/** One HTTP/2 connection (with reconnects and keepalive pings) that several service clients may share. */
export function createChannel(address: string, settings: ChannelSettings = {}): Channel {
  return new Channel(address, settings.credentials ?? grpcCredentials.createInsecure(), {
    ...messageSizeOptions(settings.maxMessageSizeBytes),
    ...keepaliveOptions(settings),
    'grpc.max_reconnect_backoff_ms': MAX_RECONNECT_BACKOFF_MS,
    ...settings.channelOptions,
  });
}

const grpcClients = new WeakMap<object, { grpcClient: GrpcClient; ownsChannel: boolean }>();

/**
 * A typed client for a protobuf-es service: unary methods return promises,
 * server-streaming methods async iterables, client-streaming methods take an
 * async iterable and return a promise, bidi methods take and return async
 * iterables. Failures are LedgerlineErrors with the server's code, reason and
 * details, or a transport reason (TRANSPORT_UNAVAILABLE, DEADLINE_EXCEEDED,
 * CANCELLED). Pass an address to give the client its own channel, or a
 * Channel to share one.
 */
export function createClient<S extends DescService>(
  service: S,
  target: string | Channel,
  options: ClientOptions = {},
): Client<S> {
  const ownsChannel = typeof target === 'string';
  const channel = ownsChannel ? createChannel(target, options) : target;
  const grpcClient = new GrpcClient(channel.getTarget(), grpcCredentials.createInsecure(), {
    channelOverride: channel,
  });
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    switch (method.methodKind) {
      case 'unary':
        client[method.localName] = unaryCall(grpcClient, method, options);
        break;
      case 'server_streaming':
        client[method.localName] = serverStreamingCall(grpcClient, method, options);
        break;
      case 'client_streaming':
        client[method.localName] = clientStreamingCall(grpcClient, method, options);
        break;
      case 'bidi_streaming':
        client[method.localName] = bidiStreamingCall(grpcClient, method, options);
        break;
    }
  }
  grpcClients.set(client, { grpcClient, ownsChannel });
  return client as Client<S>;
}

/**
 * Closes the connection of a client created from an address. A client built on
 * a shared Channel leaves it open: close the channel itself when done with it.
 */
export function closeClient(client: object): void {
  const entry = grpcClients.get(client);
  if (entry?.ownsChannel === true) entry.grpcClient.close();
}
