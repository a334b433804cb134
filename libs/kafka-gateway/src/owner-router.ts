import { Metadata, type Channel } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import { AdminService, CursorsService, LookupService, TopicsService } from '@ledgerline/proto';
import { createChannel, createClient, type CallOptions, type ChannelSettings, type Client } from '@ledgerline/rpc';
import { OwnerPublisher } from './owner-publisher.js';
import { GatewayReason } from './reasons.js';

/** Owners whose channels the gateway keeps; the least recently opened closes first beyond it. */
export const MAX_OWNER_CHANNELS = 256;
/** Topics whose owner the gateway remembers. */
export const MAX_CACHED_OWNERS = 100_000;
/** Attempts of one call while its topic moves (NOT_OWNER, TOPIC_UNLOADED, an owner gone). */
const MAX_ATTEMPTS = 4;

export interface OwnerClients {
  readonly topics: Client<typeof TopicsService>;
  readonly cursors: Client<typeof CursorsService>;
}

/** Who is calling: the token a SASL/PLAIN login gave (KoP's `token:<jwt>` password), sent as a bearer token. */
export interface Caller {
  readonly token: string | undefined;
}

export const ANONYMOUS: Caller = { token: undefined };

/**
 * An owner hosted in the gateway's own process (standalone's writer owner): its TopicsService calls
 * (publish, fetch) and CursorsService calls (a group's commits and their reads) run in process through the
 * same authorization as over gRPC, instead of encoding every batch into a request, crossing loopback and
 * decoding it again, which cost as much as the store itself. Over loopback a commit that the owner handled
 * in 1.1 ms took the gateway 3.8 ms (p50), and a consumer that commits after every batch waits for it.
 */
export interface LocalOwner {
  /** The address lookups name for it. */
  readonly address: string;
  readonly topics: Client<typeof TopicsService>;
  readonly cursors: Client<typeof CursorsService>;
}

/**
 * The gateway's way to the owners: lookups through the metadata service,
 * cached per topic; one channel per owner; a call that meets a moved topic
 * goes to the owner the refusal names, or looks up again.
 */
export class OwnerRouter {
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  private readonly metadataChannel: Channel;
  /** The owners' clients, with the channel under them; the owner in this process has none (its clients are in process). */
  private readonly channels = new Map<string, { channel: Channel | undefined; clients: OwnerClients }>();
  private readonly owners = new Map<string, string>();
  /** One publisher (its Publish streams) per owner and caller: a stream carries the token of whoever opened it. */
  private readonly publishers = new Map<string, OwnerPublisher>();

  constructor(
    metadataAddress: string,
    private readonly channelSettings: ChannelSettings,
    readonly timeoutMs: number,
    private readonly localOwner?: LocalOwner,
  ) {
    this.metadataChannel = createChannel(metadataAddress, channelSettings);
    this.admin = createClient(AdminService, this.metadataChannel);
    this.lookup = createClient(LookupService, this.metadataChannel);
  }

  callOptions(caller: Caller, signal?: AbortSignal, deadlineMs = this.timeoutMs): CallOptions {
    const options: CallOptions = { deadlineMs };
    if (signal !== undefined) options.signal = signal;
    if (caller.token !== undefined) {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${caller.token}`);
      options.metadata = metadata;
    }
    return options;
  }

  /** Runs `call` against the owner of `topic`, following moves. */
  withOwner<T>(topic: string, caller: Caller, call: (clients: OwnerClients) => Promise<T>): Promise<T> {
    return this.following(topic, caller, (address) => call(this.clientsOf(address)));
  }

  /**
   * Runs `call` with the shared Publish streams to the owner of `topic`,
   * following moves; `onIssued` runs once the first attempt has queued its
   * entry on the stream (what a caller keeping publishes in order waits for).
   */
  withPublisher<T>(
    topic: string,
    caller: Caller,
    call: (publisher: OwnerPublisher) => Promise<T>,
    onIssued?: () => void,
  ): Promise<T> {
    return this.following(topic, caller, (address) => call(this.publisherOf(address, caller)), onIssued);
  }

  private async following<T>(
    topic: string,
    caller: Caller,
    call: (address: string) => Promise<T>,
    onIssued?: () => void,
  ): Promise<T> {
    let lastError: unknown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const address = await this.ownerOf(topic, caller);
      try {
        const answer = call(address);
        if (attempt === 0) onIssued?.();
        return await answer;
      } catch (error) {
        lastError = error;
        if (!this.followMove(topic, error)) throw error;
      }
    }
    throw new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, `the owner of ${topic} kept moving`, {
      cause: lastError,
    });
  }

  /** True when the call may be retried elsewhere; learns or forgets the topic's owner accordingly. */
  private followMove(topic: string, error: unknown): boolean {
    if (!(error instanceof LedgerlineError)) return false;
    if (error.reason === OwnerReason.NOT_OWNER) {
      const address = error.details['owner_address'];
      if (address !== undefined && address !== '') this.remember(topic, address);
      else this.owners.delete(topic);
      return true;
    }
    if (error.reason === OwnerReason.TOPIC_UNLOADED || error.code === 'UNAVAILABLE') {
      this.owners.delete(topic);
      return true;
    }
    return false;
  }

  private async ownerOf(topic: string, caller: Caller): Promise<string> {
    const known = this.owners.get(topic);
    if (known !== undefined) return known;
    const answer = await this.lookup.lookupTopic({ topic, group: '' }, this.callOptions(caller));
    if (answer.advertisedAddress === '') {
      throw new LedgerlineError('UNAVAILABLE', GatewayReason.OWNER_NOT_REACHED, `no owner serves ${topic}`);
    }
    this.remember(topic, answer.advertisedAddress);
    return answer.advertisedAddress;
  }

  private remember(topic: string, address: string): void {
    this.owners.delete(topic);
    this.owners.set(topic, address);
    if (this.owners.size > MAX_CACHED_OWNERS) this.owners.delete(this.owners.keys().next().value as string);
  }

  private clientsOf(address: string): OwnerClients {
    const known = this.channels.get(address);
    if (known !== undefined) return known.clients;
    const entry =
      address === this.localOwner?.address ? { channel: undefined, clients: this.localOwner } : this.dial(address);
    this.channels.set(address, entry);
    if (this.channels.size > MAX_OWNER_CHANNELS) {
      const [oldest, evicted] = this.channels.entries().next().value as [string, { channel: Channel | undefined }];
      evicted.channel?.close();
      this.channels.delete(oldest);
    }
    return entry.clients;
  }

  private dial(address: string): { channel: Channel; clients: OwnerClients } {
    const channel = createChannel(address, this.channelSettings);
    return {
      channel,
      clients: { topics: createClient(TopicsService, channel), cursors: createClient(CursorsService, channel) },
    };
  }

  private publisherOf(address: string, caller: Caller): OwnerPublisher {
    const key = `${address}\u0000${caller.token ?? ''}`;
    const known = this.publishers.get(key);
    if (known !== undefined) return known;
    const publisher = new OwnerPublisher(this.clientsOf(address), () => this.callOptions(caller));
    this.publishers.set(key, publisher);
    if (this.publishers.size > MAX_OWNER_CHANNELS) {
      const [oldest, entry] = this.publishers.entries().next().value as [string, OwnerPublisher];
      entry.close();
      this.publishers.delete(oldest);
    }
    return publisher;
  }

  close(): void {
    for (const publisher of this.publishers.values()) publisher.close();
    this.publishers.clear();
    for (const { channel } of this.channels.values()) channel?.close();
    this.channels.clear();
    this.metadataChannel.close();
  }
}
