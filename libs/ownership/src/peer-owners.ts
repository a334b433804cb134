import { LedgerlineError } from '@ledgerline/errors';
import { OwnerControlService } from '@ledgerline/proto';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { OwnerReason } from './reasons.js';

/** Most peer owners one owner keeps a channel to; past this the oldest channel is closed. */
export const MAX_PEER_CHANNELS = 256;

/**
 * Channels to the other owners of a cluster, for the owner-to-owner calls of
 * a transfer (the source has its target load the topic). The settings are the
 * service's own (with mutual TLS, its certificate is its identity to the
 * peer), known once the service serves: a call before `connect` fails
 * UNAVAILABLE.
 */
export class PeerOwners {
  private settings: ClientOptions | undefined;
  private readonly byAddress = new Map<
    string,
    { channel: ReturnType<typeof createChannel>; control: Client<typeof OwnerControlService> }
  >();

  connect(settings: ClientOptions): void {
    this.settings = settings;
  }

  /** The OwnerControlService of the owner at `address`. */
  control(address: string): Client<typeof OwnerControlService> {
    const known = this.byAddress.get(address);
    if (known !== undefined) return known.control;
    if (this.settings === undefined)
      throw new LedgerlineError('UNAVAILABLE', OwnerReason.OWNER_NOT_SERVING, 'the owner is starting');
    const channel = createChannel(address, this.settings);
    const control = createClient(OwnerControlService, channel, this.settings);
    this.byAddress.set(address, { channel, control });
    if (this.byAddress.size > MAX_PEER_CHANNELS) this.drop(this.byAddress.keys().next().value as string);
    return control;
  }

  /**
   * Starts connecting to the owners at `addresses` without calling them: a
   * drain does so before its transfers, so the first LoadTopic to each target
   * does not wait for a connection while its topic is paused.
   */
  warm(addresses: readonly string[]): void {
    for (const address of addresses) {
      this.control(address);
      this.byAddress.get(address)?.channel.getConnectivityState(true);
    }
  }

  close(): void {
    for (const address of [...this.byAddress.keys()]) this.drop(address);
  }

  private drop(address: string): void {
    const known = this.byAddress.get(address);
    if (known === undefined) return;
    this.byAddress.delete(address);
    closeClient(known.control);
    known.channel.close();
  }
}
