import type { MetadataClients } from './metadata-clients.js';
import { notOwner } from './owner-errors.js';

/** What UnloadTopic needs of an owner's topic registry. */
export interface UnloadableTopics<T> {
  find(topic: string): T | undefined;
  unloadTopic(topic: T, why: string, release: boolean): Promise<void>;
}

/**
 * UnloadTopic as both owners answer it: a topic loaded here is unloaded and
 * its lease released; one another instance holds is refused with NOT_OWNER
 * naming that owner, so the caller asks it instead of hearing a success that
 * unloaded nothing; one nobody holds is already unloaded. `leaseTopic` is the
 * name the lease is held on (the reader topic's normal form on a read-only
 * owner).
 */
export async function unloadOnRequest<T>(
  registry: UnloadableTopics<T>,
  owner: { clients: Pick<MetadataClients, 'lookup'>; instanceId: string },
  topic: string,
  leaseTopic: string = topic,
): Promise<Record<string, never>> {
  const loaded = registry.find(topic);
  if (loaded !== undefined) {
    await registry.unloadTopic(loaded, 'unloaded on request', true);
    return {};
  }
  const answer = await owner.clients.lookup.lookupTopic({ topic: leaseTopic });
  if (answer.owned && answer.instanceId !== owner.instanceId) throw notOwner(topic, answer.advertisedAddress);
  return {};
}
