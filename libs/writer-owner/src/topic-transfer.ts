import { LedgerlineError } from '@ledgerline/errors';
import { handOverLease, notOwner, topicUnloaded, type HandOverContext, type HandedOver } from '@ledgerline/ownership';
import { handOverStateToProto } from './hand-over-state.js';
import type { OwnedTopic } from './owned-topic.js';
import { WriterReason } from './reasons.js';

/** What moving a topic needs: the lease hand-over's context (bounding the stop too), and a log. */
export interface TransferContext extends HandOverContext {
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
  const stopMs = Math.round(performance.now() - startedMs);
  let target: HandedOver;
  try {
    // The close's writes go along, so the target need not read them again (it checks them by compare-and-set).
    const closed = topic.ledger.handOverState();
    const handedOver = closed === undefined ? undefined : handOverStateToProto(closed);
    const failed = (why: string, cause?: unknown) => transferFailed(name, why, cause);
    target = await handOverLease(context, name, targetInstanceId, failed, handedOver);
  } catch (thrown) {
    // The lease is still this owner's: the next request loads the topic here again.
    await topic.endHandOver(topicUnloaded(name, `its transfer failed: ${LedgerlineError.from(thrown).message}`));
    throw LedgerlineError.from(thrown);
  }
  await topic.endHandOver(notOwner(name, target.address));
  const pausedMs = Math.round(performance.now() - startedMs);
  // Where the pause went: stopping here (entries in flight, snapshot, ledger close), the lease, the target's load.
  const phases = { stopMs, leaseMs: target.leaseMs, loadMs: target.loadMs };
  context.logger.info({ topic: name, to: target.instanceId, pausedMs, ...phases }, 'topic transferred');
  return { targetInstanceId: target.instanceId, targetAddress: target.address, pausedMs };
}
