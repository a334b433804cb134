import type { Channel } from '@grpc/grpc-js';
import { LookupService, MetadataStoreService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { GrpcMetadataNodes } from './grpc-metadata-nodes.js';
import { NodeManagedLedgerMetadata } from './node-managed-ledger-metadata.js';
import { int64ToNumber } from '@ledgerline/ledger-info';

/** Each metadata call fails with DEADLINE_EXCEEDED after this long unless the options say otherwise. */
const DEFAULT_DEADLINE_MS = 10_000;

/**
 * ManagedLedgerMetadata over the metadata service's gRPC API (cluster mode):
 * MetadataStoreService for the nodes, LookupService.AllocateLedgerId for
 * ledger ids.
 */
export class GrpcManagedLedgerMetadata extends NodeManagedLedgerMetadata {
  private readonly channel: Channel | undefined;

  constructor(
    private readonly store: Client<typeof MetadataStoreService>,
    private readonly lookup: Client<typeof LookupService>,
    options: { deadlineMs?: number; channel?: Channel } = {},
  ) {
    const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    super(new GrpcMetadataNodes(store, deadlineMs), async () => {
      const response = await lookup.allocateLedgerId({}, { deadlineMs });
      return int64ToNumber(response.ledgerId, 'allocated ledger id');
    });
    this.channel = options.channel;
  }

  /** Clients for both services over one channel to `address` (host:port). */
  static connect(address: string, options: ClientOptions & { deadlineMs?: number } = {}): GrpcManagedLedgerMetadata {
    const channel = createChannel(address, options);
    return new GrpcManagedLedgerMetadata(
      createClient(MetadataStoreService, channel, options),
      createClient(LookupService, channel, options),
      { ...options, channel },
    );
  }

  /** Closes both clients, and the channel when connect() opened it. */
  close(): void {
    closeClient(this.store);
    closeClient(this.lookup);
    this.channel?.close();
  }
}
