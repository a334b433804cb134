import { credentials, Metadata, type Channel, type ChannelCredentials } from '@grpc/grpc-js';
import { AdminService, LookupService, TopicsService } from '@ledgerline/proto';
import { createChannel, createClient, type CallOptions, type Client } from '@ledgerline/rpc';
import { invalidOption } from './options.js';

/** TLS settings, as PEM text or bytes (read the files yourself, or let the CLI's --tls-* flags do it). */
export interface TlsOptions {
  /** The CA certificates the services' certificates must come from; the system's roots when absent. */
  ca?: string | Buffer;
  /** The client's certificate chain, for mutual TLS (with key). */
  cert?: string | Buffer;
  /** The private key of cert. */
  key?: string | Buffer;
}

/** How the client reaches services: credentials and the bearer token every call carries. */
export interface ConnectionSettings {
  tls: boolean | TlsOptions;
  token: string | undefined;
}

/** The typed clients of one address (the metadata service, or one owner). */
export interface ServiceClients {
  readonly address: string;
  readonly topics: Client<typeof TopicsService>;
  readonly lookup: Client<typeof LookupService>;
  readonly admin: Client<typeof AdminService>;
}

function pem(value: string | Buffer | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === 'string' ? Buffer.from(value) : value;
}

/** Channel credentials for the TLS option; bad PEM fails here, when the client is created. */
export function channelCredentials(tls: boolean | TlsOptions): ChannelCredentials {
  if (tls === false) return credentials.createInsecure();
  if (tls === true) return credentials.createSsl();
  if (typeof tls !== 'object' || tls === null) throw invalidOption('tls', 'must be true, false or { ca, cert?, key? }');
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw invalidOption('tls', 'needs cert and key together (mutual TLS) or neither');
  }
  try {
    return credentials.createSsl(pem(tls.ca), pem(tls.key), pem(tls.cert));
  } catch (error) {
    throw invalidOption('tls', `holds PEM that does not parse: ${(error as Error).message}`);
  }
}

/** Accepts `host:port` as well as `grpc://host:port` or `http://host:port`, as users tend to write either. */
export function normaliseAddress(address: string): string {
  return address.replace(/^(grpc|grpcs|http|https|ledgerline):\/\//, '').replace(/\/+$/, '');
}

/**
 * One channel per address, shared by every producer, consumer and reader of a
 * client, so a client holds one HTTP/2 connection per owner however many
 * topics it uses.
 */
export class ServiceConnections {
  private readonly byAddress = new Map<string, { channel: Channel; clients: ServiceClients }>();

  private readonly credentials: ChannelCredentials;

  constructor(private readonly settings: ConnectionSettings) {
    this.credentials = channelCredentials(settings.tls);
  }

  /** The clients of `address`, opening its channel on first use. */
  to(address: string): ServiceClients {
    const target = normaliseAddress(address);
    const known = this.byAddress.get(target);
    if (known !== undefined) return known.clients;
    const channel = createChannel(target, { credentials: this.credentials });
    const clients: ServiceClients = {
      address: target,
      topics: createClient(TopicsService, channel),
      lookup: createClient(LookupService, channel),
      admin: createClient(AdminService, channel),
    };
    this.byAddress.set(target, { channel, clients });
    return clients;
  }

  /** Call options carrying the bearer token, a deadline and a cancellation signal. */
  callOptions(deadlineMs?: number, signal?: AbortSignal): CallOptions {
    const options: CallOptions = {};
    if (deadlineMs !== undefined) options.deadlineMs = deadlineMs;
    if (signal !== undefined) options.signal = signal;
    if (this.settings.token !== undefined) {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${this.settings.token}`);
      options.metadata = metadata;
    }
    return options;
  }

  /** Closes every channel; calls still open on them fail with CANCELLED or UNAVAILABLE. */
  close(): void {
    for (const { channel } of this.byAddress.values()) channel.close();
    this.byAddress.clear();
  }
}
