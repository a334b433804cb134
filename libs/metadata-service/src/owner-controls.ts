import { OwnerControlService } from '@ledgerline/proto';
import { closeClient, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';

/**
 * Clients of the owners' OwnerControlService, one per owner address, for
 * what the metadata service asks owners to do (the balancer's moves, moving
 * a topic off an owner its clients cannot reach). Calls go out as this
 * service: with mutual TLS, under its own certificate (`clientOptions`, set
 * once the service serves).
 */
export class OwnerControls {
  clientOptions: ClientOptions | undefined;
  private readonly clients = new Map<string, Client<typeof OwnerControlService>>();

  /** The client of the owner at `address`, made on first use. */
  to(address: string): Client<typeof OwnerControlService> {
    let client = this.clients.get(address);
    if (client === undefined) {
      client = createClient(OwnerControlService, address, this.clientOptions ?? {});
      this.clients.set(address, client);
    }
    return client;
  }

  /** Closes the clients of every address not in `live` (owners gone). */
  retain(live: ReadonlySet<string>): void {
    for (const [address, client] of this.clients) {
      if (live.has(address)) continue;
      closeClient(client);
      this.clients.delete(address);
    }
  }

  close(): void {
    this.retain(new Set());
  }
}
