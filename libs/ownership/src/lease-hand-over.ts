import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import type { HandedOverState } from '@ledgerline/proto';
import type { MetadataClients } from './metadata-clients.js';
import type { PeerOwners } from './peer-owners.js';

/** What handing a topic's lease to another owner needs: the lookup, this owner's session, its peers, a bound. */
export interface HandOverContext {
  lookup: MetadataClients['lookup'];
  session: { readonly sessionId: string };
  peers: PeerOwners;
  /** Bound on each step: the hand-over, the target's load, taking the lease back. */
  timeoutMs: number;
  logger: { warn(details: object, message: string): void };
}

export interface HandedOver {
  instanceId: string;
  address: string;
  /** How long the compare-and-set of the lease took, and the target's load after it. */
  leaseMs: number;
  loadMs: number;
}

/**
 * The middle of a transfer (PIP-307), the same for writer and read-only
 * owners: hands `topic`'s lease to `targetInstanceId` ('' lets the metadata
 * service place it) by compare-and-set, then has the target load the topic
 * (OwnerControlService.LoadTopic), so its clients find it served. When the
 * target cannot load it, the lease is taken back unless the target took it
 * up already (then it serves the topic whatever became of the answer). On
 * failure the error comes from `failed`, and the lease is still this owner's.
 * `handedOver` goes with LoadTopic: what this owner's close left in the
 * metadata store, so the target need not read it (a hint it checks).
 */
export async function handOverLease(
  context: HandOverContext,
  topic: string,
  targetInstanceId: string,
  failed: (why: string, cause?: unknown) => LedgerlineError,
  handedOver?: HandedOverState,
): Promise<HandedOver> {
  const startedMs = performance.now();
  const deadline = { deadlineMs: context.timeoutMs };
  const request = { topic, sessionId: context.session.sessionId, targetInstanceId };
  const { lease } = await context.lookup.transferLease(request, deadline);
  if (lease === undefined) throw failed('the metadata service answered without the lease');
  const handedMs = performance.now();
  try {
    const load = handedOver === undefined ? { topic } : { topic, handedOver };
    await context.peers.control(lease.advertisedAddress).loadTopic(load, deadline);
  } catch (thrown) {
    if ((await reclaim(context, topic, lease.version)) !== 'taken-up') {
      throw failed(`${lease.instanceId} did not load it: ${LedgerlineError.from(thrown).message}`, thrown);
    }
  }
  return {
    instanceId: lease.instanceId,
    address: lease.advertisedAddress,
    leaseMs: Math.round(handedMs - startedMs),
    loadMs: Math.round(performance.now() - handedMs),
  };
}

/** Takes a handed-over lease back: 'reclaimed', 'taken-up' (the target has it), or 'unknown' (no answer). */
async function reclaim(
  context: HandOverContext,
  topic: string,
  version: bigint,
): Promise<'reclaimed' | 'taken-up' | 'unknown'> {
  try {
    await context.lookup.reclaimLease(
      { topic, sessionId: context.session.sessionId, version },
      { deadlineMs: context.timeoutMs },
    );
    return 'reclaimed';
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (error.reason === MetadataServiceReason.LEASE_TAKEN_UP) return 'taken-up';
    context.logger.warn({ topic, err: error.message }, 'reclaiming a handed-over lease failed');
    return 'unknown';
  }
}
