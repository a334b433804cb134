import { LedgerlineError } from '@ledgerline/errors';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import { handOverLease, notOwner, topicUnloaded, type HandOverContext } from '@ledgerline/ownership';
import pMap from 'p-map';
import type { OwnedTopic } from './owned-topic.js';
import { WriterReason } from './reasons.js';
import type { TopicRegistry } from './topic-registry.js';

/** What letting go of topics needs: the lease hand-over's context, the registry, how many at once. */
export interface StoreReleaseContext extends HandOverContext {
  registry: TopicRegistry;
  concurrency: number;
  logger: HandOverContext['logger'] & { info(details: object, message: string): void };
}

export interface StoreReleaseOutcome {
  /** Handed to another owner, which loaded them (and fenced their ledgers). */
  moved: number;
  /** No other owner took them: unloaded and their leases released, so the next lookup places them. */
  released: number;
}

/** Refusal of a topic this owner cannot write: its ledger store does not answer. */
export function storeUnreachable(topic: string): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    WriterReason.STORE_UNREACHABLE,
    `this writer owner cannot reach its ledger store, so it takes no topic: look ${topic} up again`,
    { details: { topic } },
  );
}

/**
 * Moves every topic loaded here (and not being moved already) to an owner
 * that can write, at most `concurrency` at once. Unlike a transfer, nothing
 * is finished or closed first (that needs the store this owner cannot
 * reach): new entries wait, the lease goes to the placement's choice, the
 * target loads the topic, which fences this owner's open ledger, and only
 * then are the waiting entries and the receipts still owed answered NOT_OWNER
 * with the target's address. A topic no other owner takes is unloaded with
 * TOPIC_UNLOADED and its lease released.
 */
export async function releaseUnwritableTopics(context: StoreReleaseContext): Promise<StoreReleaseOutcome> {
  const outcome: StoreReleaseOutcome = { moved: 0, released: 0 };
  const loaded = context.registry.all().filter((topic) => !topic.unloaded && !topic.handingOver);
  await pMap(
    loaded,
    async (topic) => {
      const moved = await letGo(context, topic);
      if (moved !== undefined) outcome[moved]++;
    },
    { concurrency: context.concurrency },
  );
  if (outcome.moved + outcome.released > 0)
    context.logger.info({ ...outcome }, 'the ledger store cannot be reached: topics moved to other owners');
  return outcome;
}

async function letGo(context: StoreReleaseContext, topic: OwnedTopic): Promise<'moved' | 'released' | undefined> {
  const name = topic.name;
  try {
    topic.holdForHandOver();
  } catch {
    return undefined; // A transfer or an unload got there first.
  }
  try {
    const target = await handOverLease(context, name, '', (why, cause) => failed(name, why, cause));
    letGoOf(topic, notOwner(name, target.address));
    context.logger.info({ topic: name, to: target.instanceId }, 'topic moved off: the ledger store cannot be reached');
    return 'moved';
  } catch (thrown) {
    const why = LedgerlineError.from(thrown).message;
    letGoOf(topic, topicUnloaded(name, `its owner cannot reach the ledger store and no other owner took it (${why})`));
    await context.registry.releaseLease(name);
    context.logger.warn({ topic: name, err: why }, 'no other owner took a topic: its lease is released');
    return 'released';
  }
}

/**
 * Answers what the topic owes with `error`, then stops its managed ledger as a fenced one: its write loop,
 * still retrying against the store, stops at its next try instead of after every retry (and never rolls to a
 * new ledger for an owner that let the topic go).
 */
function letGoOf(topic: OwnedTopic, error: LedgerlineError): void {
  topic.abandon(error);
  topic.ledger.onFenced(
    new LedgerlineError(
      'ABORTED',
      ManagedLedgerReason.MANAGED_LEDGER_FENCED,
      `${topic.name} was let go: this owner cannot reach the ledger store`,
    ),
  );
}

function failed(topic: string, why: string, cause?: unknown): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', WriterReason.TRANSFER_FAILED, `moving ${topic} failed: ${why}`, {
    details: { topic },
    ...(cause === undefined ? {} : { cause }),
  });
}
