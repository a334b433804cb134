import { LedgerlineError } from '@ledgerline/errors';
import type { MetadataClients } from '@ledgerline/ownership';
import { OwnerRole, type OwnerInfo } from '@ledgerline/proto';
import { RpcReason } from '@ledgerline/rpc';
import { createLogger } from '@ledgerline/service-kit';
import { gatewayInstanceId, RegisteredPeers, type AdvertisedBroker } from '../gateway-peers.js';

type ListedGateway = Pick<OwnerInfo, 'instanceId' | 'advertisedAddress'>;

/** How the metadata service lists a gateway advertising `broker`. */
export function listedGateway(broker: AdvertisedBroker): ListedGateway {
  return { instanceId: gatewayInstanceId(broker), advertisedAddress: `${broker.host}:${broker.port}` };
}

/**
 * The metadata service as a gateway's session and peer list see it: it
 * lists `self` and `others` (the other live gateways), can refuse the next
 * `listFailures` listings as an unreachable service does, and keeps what
 * was registered and asked.
 */
export class FakeGatewayLookup {
  readonly registered: OwnerInfo[] = [];
  readonly listRequests: { group: string; role: OwnerRole }[] = [];
  unregistered = 0;
  listFailures = 0;
  others: ListedGateway[] = [];

  constructor(private readonly self: AdvertisedBroker) {}

  async registerOwner(request: { owner: OwnerInfo }) {
    this.registered.push(request.owner);
    return { sessionId: '00000000-0000-0000-0000-000000000001', ttlMs: 10_000n };
  }

  async keepAliveOwner() {
    return {};
  }

  async unregisterOwner() {
    this.unregistered++;
    return {};
  }

  async *watchOwnerSession() {}

  async listOwners(request: { group: string; role: OwnerRole }) {
    this.listRequests.push(request);
    if (this.listFailures > 0) {
      this.listFailures--;
      throw new LedgerlineError('UNAVAILABLE', RpcReason.TRANSPORT_UNAVAILABLE, 'No connection established');
    }
    const owners = [listedGateway(this.self), ...this.others];
    return { owners: owners.map((owner) => ({ ...owner, role: OwnerRole.KAFKA_GATEWAY })) };
  }
}

/** The peers of a gateway advertising `self`, over `lookup`; no list refresh runs during a spec. */
export function peersOver(
  lookup: FakeGatewayLookup,
  self: AdvertisedBroker,
  onChange: () => void = () => undefined,
): RegisteredPeers {
  return new RegisteredPeers({
    clients: { lookup, admin: {} } as unknown as MetadataClients,
    self: () => self,
    group: 'kafka-gateways',
    ttlMs: 60_000,
    refreshMs: 60_000,
    logger: createLogger('gateway-peers-spec', { level: 'silent' }),
    onChange,
  });
}
