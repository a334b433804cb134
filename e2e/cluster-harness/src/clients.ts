import { AdminService, LookupService, OwnerControlService, TopicsService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import type { LocalCluster } from '@ledgerline/cluster';

/**
 * The gRPC clients a multi-process test calls a local cluster with, closed
 * together. Admin calls go to the first metadata instance and lookups to the
 * last, so a cluster with two of them has both answer.
 */
export class ClusterClients {
  readonly admin: Client<typeof AdminService>;
  readonly lookup: Client<typeof LookupService>;
  private readonly topics = new Map<string, Client<typeof TopicsService>>();
  private readonly controls = new Map<string, Client<typeof OwnerControlService>>();

  constructor(private readonly cluster: LocalCluster) {
    const metadata = cluster.byRole('metadata');
    this.admin = createClient(AdminService, metadata[0]!.address, cluster.clientOptions);
    this.lookup = createClient(LookupService, metadata[metadata.length - 1]!.address, cluster.clientOptions);
  }

  /** The TopicsService of the owner at `address` (one client per address). */
  topicsAt(address: string): Client<typeof TopicsService> {
    let client = this.topics.get(address);
    if (client === undefined) {
      client = createClient(TopicsService, address, this.cluster.clientOptions);
      this.topics.set(address, client);
    }
    return client;
  }

  /** The OwnerControlService (transfers, drains) of the owner at `address`. */
  controlAt(address: string): Client<typeof OwnerControlService> {
    let client = this.controls.get(address);
    if (client === undefined) {
      client = createClient(OwnerControlService, address, this.cluster.clientOptions);
      this.controls.set(address, client);
    }
    return client;
  }

  /** The instance id the owner at `address` registered with. */
  async instanceIdAt(address: string): Promise<string> {
    const { owners } = await this.lookup.listOwners({ group: '' });
    const owner = owners.find((candidate) => candidate.advertisedAddress === address);
    if (owner === undefined) throw new Error(`no live owner registered at ${address}`);
    return owner.instanceId;
  }

  /**
   * Creates `tenant/namespace` (and the tenant) with retention kept, so that what no subscription
   * consumed stays and a test can read the whole log back.
   */
  async createRetainedNamespace(namespace: string): Promise<void> {
    await this.admin.createTenant({ tenant: namespace.split('/')[0]! });
    await this.admin.createNamespace({ namespace, policies: { retentionTimeMinutes: -1n, retentionSizeMb: -1n } });
  }

  /** The advertised address of the owner `topic` is served from (in owner `group` when given). */
  async ownerAddress(topic: string, group?: string): Promise<string> {
    return (await this.lookup.lookupTopic({ topic, ...(group === undefined ? {} : { group }) })).advertisedAddress;
  }

  close(): void {
    for (const client of [this.admin, this.lookup, ...this.topics.values(), ...this.controls.values()])
      closeClient(client);
  }
}
