import { LedgerlineError } from '@ledgerline/errors';
import { ServiceReason } from './client-reason.js';
import type { ServiceConnections } from './service-connections.js';

/** Most topics whose owner a client remembers; the oldest answer is forgotten first. */
export const MAX_CACHED_LOOKUPS = 100_000;

/** Where a topic is served: the owner's address, and the reader-namespace name when redirected (PIP-63). */
export interface OwnerRoute {
  readonly address: string;
  /** The topic's name on a read-only owner; '' when the owner serves the name the client uses. */
  readonly redirectTopic: string;
}

/**
 * Topic lookups through the metadata service, cached per topic. Answers are
 * hints: a call to an instance that no longer owns the topic fails NOT_OWNER,
 * and the caller then `learn`s the owner the refusal names or `forget`s the
 * answer so the next route looks up afresh.
 */
export class TopicLookup {
  private readonly routes = new Map<string, Promise<OwnerRoute>>();
  private readonly partitionCounts = new Map<string, Promise<number>>();
  /** The address each topic was last routed to, once known. */
  private readonly addresses = new Map<string, string>();
  /** Topics whose owner this client could not reach: the next lookup says which address failed. */
  private readonly unreachable = new Map<string, string>();

  constructor(
    private readonly connections: ServiceConnections,
    private readonly serviceUrl: string,
    private readonly group: string,
    private readonly timeoutMs: number,
  ) {}

  /** The owner of `topic`, from the cache or a lookup. */
  route(topic: string): Promise<OwnerRoute> {
    const cached = this.routes.get(topic);
    if (cached !== undefined) return cached;
    const looked = this.lookUp(topic);
    remember(this.routes, topic, looked);
    looked.then(
      // Unless a NOT_OWNER taught another owner meanwhile: that one is where the next call goes.
      (route) => {
        if (this.routes.get(topic) === looked) remember(this.addresses, topic, route.address);
      },
      // A failed lookup is not an answer: the next call asks again.
      () => {
        if (this.routes.get(topic) === looked) this.routes.delete(topic);
      },
    );
    return looked;
  }

  /** Records the owner a NOT_OWNER refusal named, so the retry goes straight there. */
  learn(topic: string, address: string): void {
    remember(this.routes, topic, Promise.resolve({ address, redirectTopic: '' }));
    remember(this.addresses, topic, address);
  }

  /**
   * The connection to `topic`'s owner failed: the next route looks up
   * afresh and tells the metadata service which address could not be
   * reached, so that an owner cut off from its clients only (still holding
   * its lease) can be moved off (LookupTopic's unreachable_address).
   */
  unreachableOwner(topic: string): void {
    this.routes.delete(topic);
    const address = this.addresses.get(topic);
    if (address !== undefined) remember(this.unreachable, topic, address);
  }

  /** Drops the cached owner of `topic`. */
  forget(topic: string): void {
    this.routes.delete(topic);
  }

  /** The topic's partition count (0 for a non-partitioned topic), cached: partitions are only ever added. */
  partitions(topic: string): Promise<number> {
    const cached = this.partitionCounts.get(topic);
    if (cached !== undefined) return cached;
    const asked = this.connections
      .to(this.serviceUrl)
      .admin.getTopic({ topic }, this.connections.callOptions(this.timeoutMs))
      .then((answer) => answer.topic?.partitions ?? 0);
    remember(this.partitionCounts, topic, asked);
    asked.catch(() => {
      if (this.partitionCounts.get(topic) === asked) this.partitionCounts.delete(topic);
    });
    return asked;
  }

  /**
   * The partition count of a topic a producer, consumer or reader is about
   * to use. A topic that does not exist is looked up: the metadata service
   * creates it there when its namespace allows topic auto-creation (Pulsar's
   * broker does the same on a client's first use), and otherwise the lookup
   * fails TOPIC_NOT_FOUND, which is then the answer. The count is asked again
   * afterwards rather than assumed, since another client may have created the
   * topic partitioned meanwhile.
   */
  async partitionsForUse(topic: string): Promise<number> {
    try {
      return await this.partitions(topic);
    } catch (error) {
      if (!LedgerlineError.is(error, ServiceReason.TOPIC_NOT_FOUND)) throw error;
    }
    await this.route(topic);
    return this.partitions(topic);
  }

  private async lookUp(topic: string): Promise<OwnerRoute> {
    const unreachableAddress = this.unreachable.get(topic) ?? '';
    this.unreachable.delete(topic);
    const answer = await this.connections
      .to(this.serviceUrl)
      .lookup.lookupTopic(
        { topic, group: this.group, unreachableAddress },
        this.connections.callOptions(this.timeoutMs),
      );
    if (answer.advertisedAddress === '') {
      throw new LedgerlineError(
        'UNAVAILABLE',
        ServiceReason.NO_LIVE_OWNER,
        `the lookup of ${topic} named no owner address`,
      );
    }
    return { address: answer.advertisedAddress, redirectTopic: answer.redirectTopic };
  }
}

function remember<T>(cache: Map<string, T>, key: string, value: T): void {
  cache.delete(key);
  cache.set(key, value);
  if (cache.size > MAX_CACHED_LOOKUPS) cache.delete(cache.keys().next().value as string);
}
