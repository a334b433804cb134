import { LedgerlineError } from '@ledgerline/errors';
import { AdminService, LookupService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { OwnerReason } from './reasons.js';

/**
 * What an owner asks the metadata service, always over its gRPC API (in
 * standalone too, over loopback): owner sessions, leases, lookups and
 * namespace policies. The managed ledgers reach metadata through their own
 * ManagedLedgerMetadata.
 */
export interface MetadataClients {
  lookup: Client<typeof LookupService>;
  admin: Client<typeof AdminService>;
}

/**
 * Metadata clients an owner holds before it can make them: the channel needs
 * the service's own TLS settings, known only once it serves. A call before
 * `connect` fails UNAVAILABLE (the owner is starting); `connect` returns the closer.
 */
export function lateMetadataClients(): {
  clients: MetadataClients;
  connect(address: string, settings: ClientOptions): () => void;
} {
  let bound: MetadataClients | undefined;
  const need = (): MetadataClients => {
    if (bound === undefined)
      throw new LedgerlineError('UNAVAILABLE', OwnerReason.OWNER_NOT_SERVING, 'the owner is starting');
    return bound;
  };
  const clients = {
    get lookup() {
      return need().lookup;
    },
    get admin() {
      return need().admin;
    },
  } as MetadataClients;
  return {
    clients,
    connect(address, settings) {
      const channel = createChannel(address, settings);
      const made = {
        lookup: createClient(LookupService, channel, settings),
        admin: createClient(AdminService, channel, settings),
      };
      bound = made;
      return () => {
        closeClient(made.lookup);
        closeClient(made.admin);
        channel.close();
      };
    },
  };
}
