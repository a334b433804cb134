import { LedgerlineError } from '@ledgerline/errors';
import { handOverLease, markOwnerDraining, notOwner, type HandOverContext } from '@ledgerline/ownership';
import type { ReadOnlyTopic } from './readonly-topic.js';
import { ReadOnlyOwnerReason } from './reasons.js';

export interface ReadOnlyTransferOutcome {
  targetInstanceId: string;
  targetAddress: string;
  /** From the start until this owner's consumers were told where the topic went. */
  pausedMs: number;
}

/**
 * Moves a reader topic to another read-only owner, in PIP-307's order as the
 * writer owner does, less its first step: a read-only owner takes no entries
 * and holds no ledger, so there is nothing to finish. The lease goes to the
 * target by compare-and-set, the target loads the topic, and only then this
 * owner ends its consumers with NOT_OWNER naming the target (their unsent
 * acks go to the writer as on any unload), so they go straight there. The
 * cursors live on the writer owner, so the target starts from them warm.
 */
export async function transferReadOnlyTopic(
  context: HandOverContext & { logger: { info(details: object, message: string): void } },
  topic: ReadOnlyTopic,
  targetInstanceId: string,
): Promise<ReadOnlyTransferOutcome> {
  const startedMs = performance.now();
  const name = topic.readerTopic;
  const target = await topic.whileHandingOver(async () => {
    const moved = await handOverLease(
      context,
      name,
      targetInstanceId,
      (why, cause) =>
        new LedgerlineError('UNAVAILABLE', ReadOnlyOwnerReason.TRANSFER_FAILED, `moving ${name} failed: ${why}`, {
          details: { topic: name },
          ...(cause === undefined ? {} : { cause }),
        }),
    );
    await topic.unload(`moved to ${moved.instanceId}`, notOwner(name, moved.address));
    return moved;
  });
  const pausedMs = Math.round(performance.now() - startedMs);
  context.logger.info(
    { topic: name, to: target.instanceId, pausedMs, leaseMs: target.leaseMs, loadMs: target.loadMs },
    'topic transferred',
  );
  return { targetInstanceId: target.instanceId, targetAddress: target.address, pausedMs };
}

/**
 * `ledgerline owners drain` of a read-only owner: marked draining (lookups
 * and the balancer place nothing here), then every topic moved to the
 * placement's choice, one at a time; a topic that cannot move is unloaded
 * with its lease released, so the next lookup places it. With `resume`, the
 * mark is taken off.
 */
export async function drainReadOnly(
  context: HandOverContext & { logger: { info(details: object, message: string): void } },
  topics: () => ReadOnlyTopic[],
  release: (topic: ReadOnlyTopic) => Promise<void>,
  resume: boolean,
): Promise<{ transferred: number; unloaded: number }> {
  await markOwnerDraining(context, !resume);
  const outcome = { transferred: 0, unloaded: 0 };
  if (resume) return outcome;
  for (const topic of topics()) {
    if (topic.isUnloaded) continue;
    try {
      await transferReadOnlyTopic(context, topic, '');
      outcome.transferred++;
    } catch (thrown) {
      context.logger.warn(
        { topic: topic.readerTopic, err: LedgerlineError.from(thrown).message },
        'moving a topic off a draining read-only owner failed: releasing it',
      );
      await release(topic);
      outcome.unloaded++;
    }
  }
  context.logger.info({ ...outcome }, 'drained: topics moved to other owners');
  return outcome;
}
