import type { AdminService, LookupService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';

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
