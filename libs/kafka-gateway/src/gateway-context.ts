import { setMaxListeners } from 'node:events';
import { LedgerlineError } from '@ledgerline/errors';
import type { Logger } from '@ledgerline/service-kit';
import type { GroupCoordinator } from './group-coordinator.js';
import { GroupIndex } from './group-index.js';
import { IssueOrder } from './issue-order.js';
import { soloPeers, type AdvertisedBroker, type GatewayPeers } from './gateway-peers.js';
import type { LedgerlineBackend } from './ledgerline-backend.js';
import type { TopicSummary } from './topic-summary.js';
import type { Caller } from './owner-router.js';
import { GatewayReason } from './reasons.js';
import type { KafkaGatewaySettings } from './settings.js';
import { TopicIdNames } from './topic-ids.js';
import { kafkaPartitionCount, type TopicNames } from './topic-names.js';

/** How long a topic's partition count and id are trusted before they are read again (partitions are only ever added). */
const PARTITION_COUNT_TTL_MS = 5_000;
const MAX_CACHED_TOPICS = 100_000;

/** One Kafka partition resolved to the Ledgerline topic that holds it. */
export interface ResolvedPartition {
  readonly topic: string;
  readonly partitions: number;
}

/** Checks a bearer token: the role it names, or a LedgerlineError (TokenVerifier from @ledgerline/security). */
export interface TokenCheck {
  verify(token: string): Promise<string>;
}

function unboundedListeners(signal: AbortSignal): AbortSignal {
  setMaxListeners(0, signal);
  return signal;
}

/**
 * What every request handler uses: settings, the way to Ledgerline, the
 * names, the group coordinator, and the token check that, when present,
 * makes SASL authentication required before any other request.
 */
export class GatewayContext {
  private readonly topics = new Map<string, { summary: TopicSummary; readAtMs: number }>();
  /** The gateways clients may be sent to; alone until the host registers this one (gateway-peers.ts). */
  peers: GatewayPeers = soloPeers(() => this.broker());
  /**
   * Commits of one group on one partition, applied one after another in the
   * order they arrived, from any connection (handlers/offsets.ts); a key
   * lives while commits of it wait, so the map is bounded by the requests in flight.
   */
  readonly commitOrder = new IssueOrder();
  /** Each group's index of committed partitions (group-index.ts), written before the commits. */
  readonly groupIndex: GroupIndex;
  /** The Kafka name each topic id was answered with, for Fetch by id (topic-ids.ts). */
  readonly topicIds = new TopicIdNames();
  private readonly leaving = new AbortController();
  /**
   * Aborted once this gateway leaves (leave): its long polls end, answered NOT_LEADER_OR_FOLLOWER. Every fetch in
   * flight listens on it, so it has no listener bound (Node warns of a leak past ten).
   */
  readonly leavingSignal = unboundedListeners(this.leaving.signal);

  constructor(
    readonly settings: KafkaGatewaySettings,
    readonly backend: LedgerlineBackend,
    readonly names: TopicNames,
    readonly groups: GroupCoordinator,
    readonly broker: () => AdvertisedBroker,
    readonly logger: Logger,
    readonly authentication?: TokenCheck,
  ) {
    this.groupIndex = new GroupIndex(backend.groupIndex, settings.kafkaMaxIndexedPartitionsPerGroup);
  }

  /**
   * A topic's Ledgerline partition count (0: not partitioned); undefined when
   * absent. With `create`, an absent topic is created when both the gateway
   * (kafkaAutoCreateTopics) and the topic's namespace (its policy
   * allowAutoTopicCreation) allow it.
   */
  async partitionCount(topic: string, caller: Caller, create: boolean): Promise<number | undefined> {
    return (await this.topic(topic, caller, create))?.partitions;
  }

  /**
   * A topic's partition count and id, as partitionCount finds it (and
   * creates it); read again after PARTITION_COUNT_TTL_MS, so a topic deleted
   * and created again through another gateway shows its new id within that.
   */
  async topic(topic: string, caller: Caller, create: boolean): Promise<TopicSummary | undefined> {
    const cached = this.topics.get(topic);
    if (cached !== undefined && Date.now() - cached.readAtMs < PARTITION_COUNT_TTL_MS) return cached.summary;
    let summary: TopicSummary | undefined;
    try {
      summary = await this.backend.topic(topic, caller);
    } catch (error) {
      // Partitions are only ever added: a count read before the metadata service became unreachable still holds.
      if (cached !== undefined && LedgerlineError.from(error).retryable) return cached.summary;
      throw error;
    }
    if (summary === undefined && create && (await this.mayAutoCreate(topic, caller))) {
      await this.createTopic(topic, this.settings.kafkaDefaultPartitions, caller);
      summary = await this.backend.topic(topic, caller);
    }
    if (summary === undefined) return undefined;
    this.remember(topic, summary);
    return summary;
  }

  /** Keeps what the metadata service answered about a topic (by name or by id) for the next requests. */
  remember(topic: string, summary: TopicSummary): void {
    this.topics.delete(topic);
    this.topics.set(topic, { summary, readAtMs: Date.now() });
    if (this.topics.size > MAX_CACHED_TOPICS) this.topics.delete(this.topics.keys().next().value as string);
  }

  /**
   * The Kafka name of the topic with this id (Fetch v13+), undefined when no
   * live topic has it: the name Metadata answered the id with, when that
   * topic still has it, else a topic of the gateway's Kafka namespace found
   * by id as Metadata v12 finds one. Never creates a topic.
   */
  async kafkaTopicById(topicId: Buffer, caller: Caller): Promise<string | undefined> {
    const answered = this.topicIds.nameOf(topicId);
    if (answered !== undefined) {
      const summary = await this.topic(this.names.ledgerlineTopic(answered), caller, false);
      if (summary?.topicId.equals(topicId) === true) return answered;
    }
    const found = await this.backend.topicById(this.names.namespace, topicId, caller);
    if (found === undefined) return undefined;
    this.remember(found.name, found);
    const name = this.names.kafkaTopicOf(found.name) ?? found.name;
    this.topicIds.note(topicId, name);
    return name;
  }

  private async mayAutoCreate(topic: string, caller: Caller): Promise<boolean> {
    if (!this.settings.kafkaAutoCreateTopics) return false;
    return this.backend.allowsAutoTopicCreation(this.names.namespaceOf(topic), caller);
  }

  /** Creates a partitioned topic (a Kafka topic always has partitions); a concurrent creation is not an error. */
  async createTopic(topic: string, partitions: number, caller: Caller): Promise<number> {
    try {
      await this.backend.createTopic(topic, partitions, caller);
      return partitions;
    } catch (error) {
      if (error instanceof LedgerlineError && error.code === 'ALREADY_EXISTS') {
        return (await this.backend.partitions(topic, caller)) ?? partitions;
      }
      throw error;
    }
  }

  /** True when this gateway coordinates `groupId`; elsewhere its group requests are answered NOT_COORDINATOR. */
  coordinates(groupId: string): boolean {
    return this.peers.coordinatorOf(groupId).nodeId === this.broker().nodeId;
  }

  /**
   * Hands this gateway's clients to the other gateways before it stops (GatewayPeers.leave): Metadata names them,
   * Produce and Fetch answer NOT_LEADER_OR_FOLLOWER, group requests NOT_COORDINATOR, so Kafka clients ask again
   * and move while this one still answers, where a closed port left them retrying it. False when it is alone.
   */
  async leave(): Promise<boolean> {
    const leaving = this.peers.leave();
    // Read before awaiting: the peers decide at once, and the long polls end now, not after the session is ended.
    if (this.peers.leaving()) this.leaving.abort();
    return leaving;
  }

  forgetTopic(topic: string): void {
    this.topics.delete(topic);
  }

  /**
   * The Ledgerline topic of Kafka partition `partition` of `kafkaTopic`;
   * NOT_FOUND when the topic or the partition does not exist.
   */
  async resolvePartition(kafkaTopic: string, partition: number, caller: Caller, create = false): Promise<string> {
    const topic = this.names.ledgerlineTopic(kafkaTopic);
    const count = await this.partitionCount(topic, caller, create);
    if (count === undefined || partition < 0 || partition >= kafkaPartitionCount(count)) {
      throw new LedgerlineError(
        'NOT_FOUND',
        GatewayReason.UNKNOWN_KAFKA_PARTITION,
        `${kafkaTopic} has no partition ${partition}`,
      );
    }
    return this.names.partitionTopic(topic, count, partition);
  }
}
