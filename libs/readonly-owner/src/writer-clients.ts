import { LedgerlineError } from '@ledgerline/errors';
import { CursorsService, TopicsService, type LookupService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { OwnerReason } from '@ledgerline/ownership';
import type { Channel } from '@grpc/grpc-js';

/** Clients of one writer owner instance. */
export interface WriterConnection {
  cursors: Client<typeof CursorsService>;
  topics: Client<typeof TopicsService>;
}

/** Attempts of one call: a NOT_OWNER or UNAVAILABLE answer is followed to the next owner at most this often. */
const MAX_ROUTE_ATTEMPTS = 3;

/**
 * Calls to the writer owner of a writer topic (PIP-63's cursor calls, offset
 * lookups). The owner is found by lookup and remembered; NOT_OWNER moves to
 * the owner it names, UNAVAILABLE looks up afresh (the writer may have failed
 * over), each at most MAX_ROUTE_ATTEMPTS times per call.
 */
export class WriterClients {
  private readonly routes = new Map<string, string>();
  private readonly connections = new Map<string, { channel: Channel; connection: WriterConnection }>();

  constructor(
    private readonly lookup: () => Client<typeof LookupService>,
    private readonly callTimeoutMs: number,
    /** How to reach writer owners (TLS and this owner's certificate when security is on); read when a connection opens. */
    private readonly clientOptions: () => ClientOptions = () => ({}),
  ) {}

  get callOptions(): { deadlineMs: number } {
    return { deadlineMs: this.callTimeoutMs };
  }

  async call<T>(writerTopic: string, run: (connection: WriterConnection) => Promise<T>): Promise<T> {
    let last: LedgerlineError | undefined;
    for (let attempt = 0; attempt < MAX_ROUTE_ATTEMPTS; attempt++) {
      const address = await this.route(writerTopic);
      try {
        return await run(this.connection(address));
      } catch (thrown) {
        last = LedgerlineError.from(thrown);
        if (last.reason === OwnerReason.NOT_OWNER) {
          const named = last.details['owner_address'] ?? '';
          if (named === '' || named === address) this.routes.delete(writerTopic);
          else this.routes.set(writerTopic, named);
          continue;
        }
        if (last.code === 'UNAVAILABLE') {
          this.routes.delete(writerTopic);
          continue;
        }
        throw last;
      }
    }
    throw last!;
  }

  close(): void {
    for (const { channel, connection } of this.connections.values()) {
      closeClient(connection.cursors);
      closeClient(connection.topics);
      channel.close();
    }
    this.connections.clear();
  }

  private async route(writerTopic: string): Promise<string> {
    const known = this.routes.get(writerTopic);
    if (known !== undefined) return known;
    const answer = await this.lookup().lookupTopic({ topic: writerTopic }, this.callOptions);
    this.routes.set(writerTopic, answer.advertisedAddress);
    return answer.advertisedAddress;
  }

  private connection(address: string): WriterConnection {
    const known = this.connections.get(address);
    if (known !== undefined) return known.connection;
    const options = this.clientOptions();
    const channel = createChannel(address, options);
    const connection = {
      cursors: createClient(CursorsService, channel, options),
      topics: createClient(TopicsService, channel, options),
    };
    this.connections.set(address, { channel, connection });
    return connection;
  }
}
