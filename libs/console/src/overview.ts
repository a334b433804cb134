import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { OwnerRole, type GetOverviewResponseSchema, type OwnerInfo, type ServiceStatusSchema } from '@ledgerline/proto';
import pMap from 'p-map';
import { checkInternalAccess } from './internal-access.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { FAN_OUT_CONCURRENCY, MAX_TENANTS } from './limits.js';

type ServiceStatus = MessageInitShape<typeof ServiceStatusSchema>;

const ROLE_SERVICES: Record<number, string> = {
  [OwnerRole.WRITER]: 'writer-owner',
  [OwnerRole.READONLY]: 'readonly-owner',
  [OwnerRole.KAFKA_GATEWAY]: 'kafka-gateway',
};

function ownerServices(owners: readonly OwnerInfo[]): ServiceStatus[] {
  return owners.map((owner) => ({
    service: ROLE_SERVICES[owner.role] ?? 'owner',
    address: owner.advertisedAddress,
    status: 'serving',
    detail: `${owner.instanceId} in group ${owner.group}`,
  }));
}

/** The collector's line: serving, or why not. Refusals of the caller's rights are the caller's answer, not a status. */
async function collectorService(context: ConsoleContext, caller: Caller): Promise<ServiceStatus | undefined> {
  const collector = context.backends.collector;
  if (collector === undefined) return undefined;
  // The collector is an internal API: a caller who may not read it sees the overview without its line.
  const allowed = await checkInternalAccess(context, caller, '/ledgerline.v1.GarbageCollectorService/GetStatus').then(
    () => true,
    () => false,
  );
  if (!allowed) return undefined;
  try {
    const status = await collector.getStatus({}, caller.callOptions());
    return { service: 'garbage-collector', address: status.instanceId, status: 'serving', detail: '' };
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (error.code === 'UNAUTHENTICATED' || error.code === 'PERMISSION_DENIED') throw error;
    return {
      service: 'garbage-collector',
      address: '',
      status: 'unreachable',
      detail: `${error.reason}: ${error.message}`,
    };
  }
}

async function countNamespaces(context: ConsoleContext, caller: Caller, tenants: readonly string[]): Promise<number> {
  const counts = await pMap(
    tenants.slice(0, MAX_TENANTS),
    async (tenant) => {
      const listed = await context.backends.admin.listNamespaces({ tenant }, caller.callOptions());
      return listed.namespaces.length;
    },
    { concurrency: FAN_OUT_CONCURRENCY },
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * The overview page. Owners list, balancer status and tenants are what a
 * super-user may read (the services refuse anyone else, and so does this).
 * Rates, topics and storage are the sums of the owners' last load reports.
 */
export async function overview(
  context: ConsoleContext,
  caller: Caller,
): Promise<MessageInitShape<typeof GetOverviewResponseSchema>> {
  const { admin, lookup } = context.backends;
  const options = caller.callOptions();
  // Every read at once (the namespace count after the tenant list it needs): the page waits for the slowest
  // chain, two calls deep, not for four calls one after another.
  const tenantsAndNamespaces = admin
    .listTenants({}, options)
    .then(async (tenants) => ({ tenants, namespaces: await countNamespaces(context, caller, tenants.tenants) }));
  const [listed, balancer, { tenants, namespaces }, collector] = await Promise.all([
    lookup.listOwners({}, options),
    admin.getBalancerStatus({}, options),
    tenantsAndNamespaces,
    collectorService(context, caller),
  ]);
  const owners = listed.owners;
  const sum = (pick: (owner: OwnerInfo) => number) => owners.reduce((total, owner) => total + pick(owner), 0);
  return {
    sampledAtMs: BigInt(Date.now()),
    services: [
      { service: 'metadata', address: '', status: 'serving', detail: '' },
      ...ownerServices(owners),
      ...(collector === undefined ? [] : [collector]),
    ],
    owners,
    messagesInPerSecond: sum((owner) => owner.load?.messagesInPerSecond ?? 0),
    messagesOutPerSecond: sum((owner) => owner.load?.messagesOutPerSecond ?? 0),
    bytesInPerSecond: sum((owner) => owner.load?.bytesInPerSecond ?? 0),
    bytesOutPerSecond: sum((owner) => owner.load?.bytesOutPerSecond ?? 0),
    topicsOwned: BigInt(sum((owner) => (owner.role === OwnerRole.WRITER ? (owner.load?.topicsOwned ?? 0) : 0))),
    // Each writer owner reports the bytes of the ledgers of the topics it holds now: a topic no owner has
    // loaded (idle since its last unload) and the cursors' ledgers are not counted, so this is a floor of
    // what the ledger store holds, marked not exact. Read-only owners hold the same topics' readers and
    // report nothing, so nothing is counted twice.
    storageUsedBytes: BigInt(
      sum((owner) => (owner.role === OwnerRole.WRITER ? Number(owner.load?.storageBytes ?? 0n) : 0)),
    ),
    storageExact: false,
    balancer,
    tenants: BigInt(tenants.tenants.length),
    namespaces: BigInt(namespaces),
  };
}
