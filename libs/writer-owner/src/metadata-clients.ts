import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-service/reasons';
import { AdminService, LookupService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { WriterReason } from './reasons.js';

/**
 * What the writer owner asks the metadata service, always over its gRPC API
 * (in standalone too, over loopback): owner sessions, leases, lookups and
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
      throw new LedgerlineError('UNAVAILABLE', WriterReason.OWNER_NOT_SERVING, 'the owner is starting');
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

/**
 * Renews an owner's lease on `topic`; the reason when the lease is gone (lost,
 * its session expired, the topic deleted), so the owner unloads the topic.
 * Any other failure (metadata unreachable) is left to the next round, which
 * runs well within the TTL.
 */
export async function renewLeaseOrLoss(
  lookup: MetadataClients['lookup'],
  topic: string,
  sessionId: string,
  ttlMs: number,
): Promise<string | undefined> {
  try {
    await lookup.renewLease({ topic, sessionId }, { deadlineMs: ttlMs });
    return undefined;
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    const gone =
      error.reason === MetadataServiceReason.LEASE_LOST ||
      error.reason === MetadataServiceReason.SESSION_EXPIRED ||
      error.code === 'NOT_FOUND';
    return gone ? error.reason : undefined;
  }
}
