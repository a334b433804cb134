import type { Channel } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { AdminService, CursorsService, GarbageCollectorService, LookupService, TopicsService } from '@ledgerline/proto';
import { createChannel, createClient, type ChannelSettings, type Client } from '@ledgerline/rpc';
import { OwnerReason } from '@ledgerline/ownership';
import type { Caller } from './caller.js';
import { MAX_OWNER_CHANNELS } from './limits.js';

export interface ConsoleBackendsOptions {
  /** host:port of the metadata service (AdminService, LookupService). */
  metadataAddress: string;
  /** host:port of a garbage collector; the collector page says it is not configured without one. */
  collectorAddress?: string;
  /** host:port of a Kafka gateway's Kafka listener; the Kafka page says it is not configured without one. */
  kafkaAddress?: string;
  /** TLS and keepalive for every channel, as the services' own clients use. */
  channelSettings?: ChannelSettings;
}

/** The clients of one owner, on one channel. */
export interface OwnerClients {
  readonly address: string;
  readonly topics: Client<typeof TopicsService>;
  readonly cursors: Client<typeof CursorsService>;
}

interface OwnerEntry extends OwnerClients {
  readonly channel: Channel;
}

/**
 * The console's channels to the services: one to the metadata service, one
 * to the collector, and one per owner it has routed a topic call to (at most
 * MAX_OWNER_CHANNELS, least recently used closed first). No call made through
 * them carries anything but the caller's own token.
 */
export class ConsoleBackends {
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  readonly collector: Client<typeof GarbageCollectorService> | undefined;
  readonly kafkaAddress: string | undefined;
  readonly #channels: Channel[] = [];
  readonly #owners = new Map<string, OwnerEntry>();
  readonly #settings: ChannelSettings;

  constructor(options: ConsoleBackendsOptions) {
    this.#settings = options.channelSettings ?? {};
    const metadata = this.#open(options.metadataAddress);
    this.admin = createClient(AdminService, metadata);
    this.lookup = createClient(LookupService, metadata);
    this.collector =
      options.collectorAddress === undefined
        ? undefined
        : createClient(GarbageCollectorService, this.#open(options.collectorAddress));
    this.kafkaAddress = options.kafkaAddress;
  }

  #open(address: string): Channel {
    const channel = createChannel(address, this.#settings);
    this.#channels.push(channel);
    return channel;
  }

  /** The clients of the owner at `address`, opening its channel on first use. */
  owner(address: string): OwnerClients {
    const known = this.#owners.get(address);
    if (known !== undefined) {
      // Re-inserted so the map's order is the order of last use.
      this.#owners.delete(address);
      this.#owners.set(address, known);
      return known;
    }
    const channel = createChannel(address, this.#settings);
    const entry: OwnerEntry = {
      address,
      channel,
      topics: createClient(TopicsService, channel),
      cursors: createClient(CursorsService, channel),
    };
    this.#owners.set(address, entry);
    if (this.#owners.size > MAX_OWNER_CHANNELS) {
      const [oldest, evicted] = this.#owners.entries().next().value as [string, OwnerEntry];
      this.#owners.delete(oldest);
      evicted.channel.close();
    }
    return entry;
  }

  /**
   * Runs `call` against the owner serving `topic`, found by a lookup as the
   * SDK finds it. An owner that answers NOT_OWNER names the one that owns the
   * topic now (a move in between): the call goes there once more.
   */
  async atOwner<T>(topic: string, caller: Caller, call: (owner: OwnerClients) => Promise<T>): Promise<T> {
    const found = await this.lookup.lookupTopic({ topic }, caller.callOptions());
    try {
      return await call(this.owner(found.advertisedAddress));
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      const moved = error.reason === OwnerReason.NOT_OWNER ? error.details['owner_address'] : undefined;
      if (moved === undefined || moved === '' || moved === found.advertisedAddress) throw error;
      return call(this.owner(moved));
    }
  }

  close(): void {
    for (const entry of this.#owners.values()) entry.channel.close();
    this.#owners.clear();
    for (const channel of this.#channels) channel.close();
  }
}
