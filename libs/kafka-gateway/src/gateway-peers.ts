import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { rendezvousPick } from '@ledgerline/metadata-contract';
import { OwnerSession, type MetadataClients } from '@ledgerline/ownership';
import { OwnerRole, type OwnerInfo } from '@ledgerline/proto';
import type { Logger } from '@ledgerline/service-kit';
import { PeerWatch } from './peer-watch.js';

/** Where Kafka clients reach this gateway: what Metadata and FindCoordinator answer. */
export interface AdvertisedBroker {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

/**
 * The gateways a client may be sent to: the brokers Metadata names, and the
 * one that coordinates each consumer group.
 */
export interface GatewayPeers {
  /** Every live gateway as a broker, this one included. */
  brokers(): AdvertisedBroker[];
  /** The gateway coordinating `groupId`: the same answer on every gateway that sees the same peers. */
  coordinatorOf(groupId: string): AdvertisedBroker;
  /**
   * The broker Metadata names the leader of a partition (`key` names it) and the controller: this gateway, which
   * can serve every partition; once it is leaving, one of the others, spread over them by rendezvous hashing.
   */
  leaderOf(key: string): AdvertisedBroker;
  /** True once this gateway is handing its clients to the others (leave). */
  leaving(): boolean;
  /**
   * Starts handing this gateway's clients to the other live gateways (a SIGTERM's drain): false, changing nothing,
   * when there is no other to take them.
   */
  leave(): Promise<boolean>;
}

/** A gateway alone (standalone): it is every broker and coordinates every group. */
export function soloPeers(self: () => AdvertisedBroker): GatewayPeers {
  return {
    brokers: () => [self()],
    coordinatorOf: () => self(),
    leaderOf: () => self(),
    leaving: () => false,
    leave: () => Promise.resolve(false),
  };
}

/** How long a connection attempt to a peer may take before it says nothing about it. */
const PEER_CONNECT_TIMEOUT_MS = 1_000;

/** An instance id names the broker id, since a peer's is needed to answer FindCoordinator with it. */
const INSTANCE_ID = /^kafka-(\d+)-/;

export function gatewayInstanceId(broker: AdvertisedBroker): string {
  return `kafka-${broker.nodeId}-${broker.host}:${broker.port}`.replace(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 128);
}

/** A registered gateway as a broker; undefined for a record this gateway did not write (a bad id or address). */
export function peerBroker(owner: Pick<OwnerInfo, 'instanceId' | 'advertisedAddress'>): AdvertisedBroker | undefined {
  const nodeId = INSTANCE_ID.exec(owner.instanceId)?.[1];
  const address = /^(.+):(\d{1,5})$/.exec(owner.advertisedAddress);
  if (nodeId === undefined || address === null) return undefined;
  return { nodeId: Number(nodeId), host: address[1]!, port: Number(address[2]) };
}

/**
 * The coordinator of `groupId` among `brokers`: rendezvous hashing, as lookups
 * place topics, so a gateway that joins or leaves moves only the groups it
 * wins or held.
 */
export function coordinatorAmong(brokers: readonly AdvertisedBroker[], groupId: string): AdvertisedBroker | undefined {
  return rendezvousPick(brokers, (broker) => `${broker.nodeId}@${broker.host}:${broker.port}`, groupId);
}

export interface RegisteredPeersOptions {
  clients: MetadataClients;
  /** This gateway as clients reach it; read when registering, so the bound port is known. */
  self: () => AdvertisedBroker;
  /** The owner group gateways register in (kafkaGatewayGroup). */
  group: string;
  /** The session's TTL (kafkaGatewaySessionTtlMs): a gateway gone longer stops coordinating. */
  ttlMs: number;
  /** How often the live gateways are listed again. */
  refreshMs: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Called after a refresh changed the peers: the host lets go of the groups it no longer coordinates. */
  onChange?: () => void;
}

/**
 * Gateways that find each other through the metadata service: each registers
 * an owner session of role KAFKA_GATEWAY (it never takes a lease) and lists
 * the live ones every `refreshMs`. Both run in the background and are retried
 * there: a gateway serves while the metadata service is still starting. Until
 * the first list, and while the metadata service cannot be reached, the last
 * list stands (at first: this gateway alone).
 */
export class RegisteredPeers implements GatewayPeers {
  private session: OwnerSession | undefined;
  private timer: NodeJS.Timeout | undefined;
  private peers: AdvertisedBroker[] = [];
  private registered = false;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private warned = false;
  /** Set by leave(): this gateway hands its clients to the others. */
  private left = false;
  /** Peers whose port refused a connection are left out at once, not at the next list (peer-watch.ts). */
  private readonly watch: PeerWatch;

  constructor(private readonly options: RegisteredPeersOptions) {
    this.watch = new PeerWatch({
      connectTimeoutMs: PEER_CONNECT_TIMEOUT_MS,
      retryMs: options.refreshMs,
      onChange: () => {
        if (this.stopped) return;
        const gone = this.peers.filter((peer) => this.watch.isGone(peer));
        this.options.logger.info(
          { gone: gone.map((peer) => `${peer.host}:${peer.port}`) },
          'kafka gateways refusing connections changed',
        );
        this.options.onChange?.();
      },
    });
  }

  /** Starts registering and listing; `listed` resolves after the first attempt at both. */
  start(): { listed: Promise<void> } {
    const self = this.options.self();
    this.session = new OwnerSession({
      clients: this.options.clients,
      identity: {
        instanceId: gatewayInstanceId(self),
        group: this.options.group,
        advertisedAddress: `${self.host}:${self.port}`,
      },
      ttlMs: this.options.ttlMs,
      role: OwnerRole.KAFKA_GATEWAY,
      onLost: (error) => this.options.logger.warn({ reason: error.reason }, 'gateway session lost: registering again'),
      logger: this.options.logger,
    });
    this.timer = setInterval(() => this.tick().catch(unexpectedRejection), this.options.refreshMs);
    this.timer.unref();
    return { listed: this.tick() };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watch.close();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    await this.session?.stop();
  }

  /**
   * Hands this gateway's clients to the other live gateways before it stops: from now on it is no broker in what
   * Metadata answers, no partition's leader and no group's coordinator (Kafka clients told NOT_LEADER_OR_FOLLOWER or
   * NOT_COORDINATOR ask again and move), and its session ends, so the others stop picking it at their next list.
   * False, changing nothing, when no other gateway is live to take them.
   */
  async leave(): Promise<boolean> {
    if (this.left) return true;
    if (this.others().length === 0) return false;
    this.left = true;
    this.options.onChange?.();
    await this.session?.stop();
    return true;
  }

  leaving(): boolean {
    return this.left;
  }

  brokers(): AdvertisedBroker[] {
    const others = this.others();
    // Leaving, this gateway stays listed only if every other one has gone meanwhile: clients need some broker.
    return this.left && others.length > 0 ? others : [this.options.self(), ...others];
  }

  coordinatorOf(groupId: string): AdvertisedBroker {
    return coordinatorAmong(this.brokers(), groupId) ?? this.options.self();
  }

  leaderOf(key: string): AdvertisedBroker {
    return this.left ? (coordinatorAmong(this.brokers(), key) ?? this.options.self()) : this.options.self();
  }

  private others(): AdvertisedBroker[] {
    const self = this.options.self();
    return this.peers.filter((peer) => peer.nodeId !== self.nodeId && !this.watch.isGone(peer));
  }

  private tick(): Promise<void> {
    this.ticking ??= (async () => {
      try {
        if (!this.registered) await this.register();
        if (!this.stopped) await this.refresh();
      } finally {
        this.ticking = undefined;
      }
    })();
    return this.ticking;
  }

  private async register(): Promise<void> {
    try {
      await this.session!.start();
      this.registered = true;
    } catch (thrown) {
      this.warnOnce('registering this kafka gateway failed; retrying', thrown);
    }
  }

  private async refresh(): Promise<void> {
    try {
      const { owners } = await this.options.clients.lookup.listOwners(
        { group: this.options.group, role: OwnerRole.KAFKA_GATEWAY },
        { deadlineMs: Math.max(1_000, this.options.refreshMs * 2) },
      );
      const peers = owners.flatMap((owner) => peerBroker(owner) ?? []);
      peers.sort((a, b) => a.nodeId - b.nodeId);
      const changed = JSON.stringify(peers) !== JSON.stringify(this.peers);
      this.peers = peers;
      if (!this.stopped) this.watch.set(peers.filter((peer) => peer.nodeId !== this.options.self().nodeId));
      this.warned = false;
      if (changed) {
        this.options.logger.info({ gateways: peers.map((peer) => `${peer.host}:${peer.port}`) }, 'kafka gateways');
        this.options.onChange?.();
      }
    } catch (thrown) {
      this.warnOnce('listing the kafka gateways failed; keeping the last list', thrown);
    }
  }

  private warnOnce(message: string, thrown: unknown): void {
    if (!this.warned) this.options.logger.warn({ err: LedgerlineError.from(thrown).message }, message);
    this.warned = true;
  }
}
