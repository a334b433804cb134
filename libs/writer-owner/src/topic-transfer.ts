import { LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-service/reasons';
import { notOwner, topicUnloaded, type MetadataClients, type PeerOwners } from '@ledgerline/ownership';
import type { OwnedTopic } from './owned-topic.js';
import { WriterReason } from './reasons.js';

/** What moving a topic needs: the lookup (leases), this owner's session, channels to peers, and a bound. */
export interface TransferContext {
  lookup: MetadataClients['lookup'];
  session: { readonly sessionId: string };
  peers: PeerOwners;
  /** Bound on each step: stopping the topic, the hand-over, the target's load. */
  timeoutMs: number;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

export interface TransferOutcome {
  targetInstanceId: string;
  targetAddress: string;
  /** From the moment the topic stopped taking entries until clients were told where it went. */
  pausedMs: number;
}

function transferFailed(topic: string, why: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', WriterReason.TRANSFER_FAILED, `moving ${topic} failed: ${why}`, {
    details: { topic },
    ...(cause === undefined ? {} : { cause }),
  });
}

async function bounded<T>(work: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Moves `topic` to `targetInstanceId` ('' lets the metadata service place it)
 * in PIP-307's order: stop taking entries and finish those in flight, close
 * the ledger, hand the lease over by compare-and-set, have the target load
 * the topic, and only then end this owner's streams for it with NOT_OWNER
 * naming the target, so clients go straight there. Entries sent meanwhile
 * wait, and are answered NOT_OWNER then (the producer resends them to the
 * target, which deduplicates). When the target cannot load the topic, the
 * lease is taken back unless the target already took it up.
 */
export async function transferTopic(
  context: TransferContext,
  topic: OwnedTopic,
  targetInstanceId: string,
): Promise<TransferOutcome> {
  const startedMs = performance.now();
  const name = topic.name;
  try {
    await bounded(topic.stopForHandOver(), context.timeoutMs, 'finishing the entries in flight');
  } catch (thrown) {
    await topic.endHandOver(topicUnloaded(name, 'a transfer could not stop it cleanly'));
    throw transferFailed(name, LedgerlineError.from(thrown).message, thrown);
  }
  const stoppedMs = performance.now();
  const deadline = { deadlineMs: context.timeoutMs };
  let lease;
  try {
    const request = { topic: name, sessionId: context.session.sessionId, targetInstanceId };
    lease = (await context.lookup.transferLease(request, deadline)).lease;
  } catch (thrown) {
    // The lease is still this owner's: the next request loads the topic here again.
    await topic.endHandOver(topicUnloaded(name, 'its transfer was refused'));
    throw LedgerlineError.from(thrown);
  }
  if (lease === undefined) {
    await topic.endHandOver(topicUnloaded(name, 'its transfer named no lease'));
    throw transferFailed(name, 'the metadata service answered without the lease');
  }
  const address = lease.advertisedAddress;
  const handedMs = performance.now();
  try {
    await context.peers.control(address).loadTopic({ topic: name }, deadline);
  } catch (thrown) {
    const outcome = await reclaim(context, name, lease.version);
    if (outcome !== 'taken-up') {
      await topic.endHandOver(topicUnloaded(name, `its target ${lease.instanceId} could not load it`));
      throw transferFailed(
        name,
        `${lease.instanceId} did not load it: ${LedgerlineError.from(thrown).message}`,
        thrown,
      );
    }
    // The target took the lease up: it serves the topic, whatever became of the answer.
  }
  const loadedMs = performance.now();
  await topic.endHandOver(notOwner(name, address));
  const pausedMs = Math.round(performance.now() - startedMs);
  // Where the pause went: stopping here (entries in flight, snapshot, ledger close), the lease, the target's load.
  const phases = {
    stopMs: Math.round(stoppedMs - startedMs),
    leaseMs: Math.round(handedMs - stoppedMs),
    loadMs: Math.round(loadedMs - handedMs),
  };
  context.logger.info({ topic: name, to: lease.instanceId, pausedMs, ...phases }, 'topic transferred');
  return { targetInstanceId: lease.instanceId, targetAddress: address, pausedMs };
}

/** Takes a handed-over lease back: 'reclaimed', 'taken-up' (the target has it), or 'unknown' (no answer). */
async function reclaim(
  context: TransferContext,
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
