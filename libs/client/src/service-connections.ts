import { credentials, Metadata, type Channel, type ChannelCredentials } from '@grpc/grpc-js';
import { AdminService, LookupService, TopicsService } from '@ledgerline/proto';
import { createChannel, createClient, type CallOptions, type Client } from '@ledgerline/rpc';

/** TLS settings: PEM bytes of the trusted roots and, for mutual TLS, the client's key and certificate chain. */
export interface TlsOptions {
  /** Trusted root certificates (PEM); the system's when absent. */
  rootCerts?: Buffer;
  /** The client's private key (PEM), for mutual TLS. */
  privateKey?: Buffer;
  /** The client's certificate chain (PEM), for mutual TLS. */
  certChain?: Buffer;
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

function channelCredentials(tls: boolean | TlsOptions): ChannelCredentials {
  if (tls === false) return credentials.createInsecure();
  const settings = tls === true ? {} : tls;
  return credentials.createSsl(settings.rootCerts ?? null, settings.privateKey ?? null, settings.certChain ?? null);
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

  constructor(private readonly settings: ConnectionSettings) {}

  /** The clients of `address`, opening its channel on first use. */
  to(address: string): ServiceClients {
    const target = normaliseAddress(address);
    const known = this.byAddress.get(target);
    if (known !== undefined) return known.clients;
    const channel = createChannel(target, { credentials: channelCredentials(this.settings.tls) });
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
