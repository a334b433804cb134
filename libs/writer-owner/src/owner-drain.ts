import { LedgerlineError } from '@ledgerline/errors';
import { markOwnerDraining, type MetadataClients, type OwnerIdentity, type PeerOwners } from '@ledgerline/ownership';
import { OwnerRole } from '@ledgerline/proto';
import pMap from 'p-map';
import type { OwnedTopic } from './owned-topic.js';
import type { TopicRegistry } from './topic-registry.js';
import type { TransferOutcome } from './topic-transfer.js';

/** What a drain needs of its owner. */
export interface DrainContext {
  registry: TopicRegistry;
  lookup: MetadataClients['lookup'];
  session: { readonly sessionId: string };
  transfer: (topic: OwnedTopic, targetInstanceId: string) => Promise<TransferOutcome>;
  concurrency: number;
  /** Opens the channels to the owners the topics may go to, so no transfer waits for one (best effort). */
  warmTargets: () => Promise<void>;
  logger: { info(details: object, message: string): void; warn(details: object, message: string): void };
}

export interface DrainOutcome {
  transferred: number;
  /** Topics no other owner could take: unloaded with their lease released, so the next lookup places them. */
  unloaded: number;
}

/** Bound on listing the other owners before a drain: the drain goes on without warm channels past it. */
const WARM_PEERS_DEADLINE_MS = 2_000;

/** Starts connecting to the other writer owners of this owner's group (a drain's targets); never throws. */
export async function warmPeerChannels(owner: {
  lookup: MetadataClients['lookup'];
  peers: PeerOwners;
  identity: OwnerIdentity;
  logger: { warn(details: object, message: string): void };
}): Promise<void> {
  try {
    const { owners } = await owner.lookup.listOwners(
      { group: owner.identity.group, role: OwnerRole.WRITER },
      { deadlineMs: WARM_PEERS_DEADLINE_MS },
    );
    const others = owners.filter((each) => each.instanceId !== owner.identity.instanceId);
    owner.peers.warm(others.map((each) => each.advertisedAddress));
  } catch (thrown) {
    owner.logger.warn({ err: LedgerlineError.from(thrown).message }, 'listing the other owners before a drain failed');
  }
}

/** Marks this owner draining (or not) in the metadata service; the drain goes on without it. */
export function markDraining(context: DrainContext, draining: boolean): Promise<void> {
  return markOwnerDraining(context, draining);
}

/**
 * Moves every topic loaded here to other owners, at most `concurrency` at
 * once, each to the placement's choice among the group's other owners that
 * are not draining. From the start no new topic is loaded here and lookups
 * place none here. The channels to the other owners are opened first (while
 * the draining mark is written), not by each first transfer to an owner
 * while its topic is paused. A topic that cannot move is unloaded and its
 * lease released.
 */
export async function transferEverything(context: DrainContext): Promise<DrainOutcome> {
  await Promise.all([markDraining(context, true), context.warmTargets()]);
  context.registry.acceptNewTopics(false);
  const outcome: DrainOutcome = { transferred: 0, unloaded: 0 };
  await pMap(
    context.registry.all(),
    async (topic) => {
      if (topic.unloaded || topic.handingOver) return;
      try {
        await context.transfer(topic, '');
        outcome.transferred++;
      } catch (thrown) {
        context.logger.warn(
          { topic: topic.name, err: LedgerlineError.from(thrown).message },
          'moving a topic off a draining owner failed: releasing it',
        );
        await context.registry.unloadTopic(topic, 'the owner is draining', true);
        await context.registry.releaseLease(topic.name);
        outcome.unloaded++;
      }
    },
    { concurrency: context.concurrency },
  );
  context.logger.info({ ...outcome }, 'drained: topics moved to other owners');
  return outcome;
}
