import { OwnerControlService } from '@ledgerline/proto';
import { closeClient, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';

/** Owner clients kept at most: more than any group's owners, few enough that addresses of gone pods do not pile up. */
export const MAX_OWNER_CLIENTS = 1_024;

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

  /** The client of the owner at `address`, made on first use; past MAX_OWNER_CLIENTS the least recently used goes. */
  to(address: string): Client<typeof OwnerControlService> {
    let client = this.clients.get(address);
    if (client === undefined) {
      client = createClient(OwnerControlService, address, this.clientOptions ?? {});
      if (this.clients.size >= MAX_OWNER_CLIENTS) this.forget(this.clients.keys().next().value as string);
    } else {
      this.clients.delete(address);
    }
    this.clients.set(address, client);
    return client;
  }

  /** Closes the client of `address`, if there is one. */
  forget(address: string): void {
    const client = this.clients.get(address);
    if (client === undefined) return;
    closeClient(client);
    this.clients.delete(address);
  }

  /** Closes the clients of every address not in `live` (owners gone). */
  retain(live: ReadonlySet<string>): void {
    for (const address of [...this.clients.keys()]) if (!live.has(address)) this.forget(address);
  }

  close(): void {
    this.retain(new Set());
  }
}
