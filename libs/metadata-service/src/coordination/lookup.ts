import { TopicName, type NamespaceName } from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { getLiveLease, resolveOwnableTopic } from './leases.js';
import { readersOf } from '../admin/namespace-readers.js';
import { readNamespace } from '../admin/namespaces.js';
import { listLiveOwners } from './owner-sessions.js';
import { validateOwnerGroup } from '../admin/policies.js';
import type { OwnerRoleName } from '../records/records.js';
import { placeTopic } from './placement.js';
import type { TopicAutoCreation } from './topic-auto-creation.js';
import { parseTopic } from '../admin/topic-scope.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

export interface LookupAnswer {
  instanceId: string;
  advertisedAddress: string;
  role: OwnerRoleName;
  /** The topic's name in the reader namespace the answer serves; '' when not redirected. */
  redirectTopic: string;
  /** True when the topic has a live lease with this owner. */
  owned: boolean;
}

/**
 * Which instance serves a topic: the holder of its live lease; without one, a
 * live instance of the namespace's owner group that is not draining, chosen
 * by rendezvous hashing (stable and even).
 *
 * PIP-63: when the lookup arrives through `group` and that group serves a
 * reader namespace whose writer namespace is the topic's namespace, the answer
 * is a read-only owner of that group, with redirectTopic = the same local name
 * in the reader namespace. The client keeps the writer topic's name and only
 * connects to another address.
 *
 * A topic that does not exist is NOT_FOUND / TOPIC_NOT_FOUND, unless its
 * namespace's allowAutoTopicCreation policy lets the lookup create it
 * (topic-auto-creation.ts); a redirected lookup never creates one.
 */
export async function lookupTopic(
  context: AdminContext,
  autoCreation: TopicAutoCreation,
  topicName: string,
  group: string,
): Promise<LookupAnswer> {
  const topic = parseTopic(topicName);
  const viaGroup = group === '' ? undefined : validateOwnerGroup(group);
  const namespace = await readNamespace(context, topic.namespaceName);
  const policies = namespace.record.policies;
  if (viaGroup !== undefined && viaGroup !== policies.ownerGroup && policies.writerNamespace === '') {
    const reader = await readerServedBy(context, topic.namespaceName, viaGroup);
    if (reader !== undefined) {
      const view = TopicName.inNamespace(reader, topic.localName);
      await resolveOwnableTopic(context, view);
      const answer = await ownerFor(context, view, viaGroup, 'readonly');
      return { ...answer, redirectTopic: view.toString() };
    }
  }
  await autoCreation.resolve(topic, policies);
  const role = policies.writerNamespace === '' ? 'writer' : 'readonly';
  return { ...(await ownerFor(context, topic, policies.ownerGroup, role)), redirectTopic: '' };
}

async function readerServedBy(
  context: AdminContext,
  writer: NamespaceName,
  group: string,
): Promise<NamespaceName | undefined> {
  const readers = await readersOf(context, writer);
  const served = readers.filter((reader) => reader.record.policies.ownerGroup === group);
  served.sort((a, b) => (a.namespace.toString() < b.namespace.toString() ? -1 : 1));
  return served[0]?.namespace;
}

async function ownerFor(context: AdminContext, topic: TopicName, group: string, role: OwnerRoleName) {
  const lease = await getLiveLease(context, topic);
  if (lease !== undefined) {
    return { instanceId: lease.instanceId, advertisedAddress: lease.advertisedAddress, role, owned: true };
  }
  const owners = await listLiveOwners(context, group, role);
  const chosen = placeTopic(owners, topic.toString());
  if (chosen === undefined) {
    throw new LedgerlineError(
      'UNAVAILABLE',
      MetadataServiceReason.NO_LIVE_OWNER,
      `no live ${role} owner is registered in group ${group} to serve ${topic.toString()}`,
      { details: { group, role } },
    );
  }
  return { instanceId: chosen.instanceId, advertisedAddress: chosen.advertisedAddress, role, owned: false };
}
