import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Position } from '@ledgerline/cursor-codec';
import type { SeekTarget } from '@ledgerline/managed-ledger';
import type { ConsumeOutput, MetadataClients, OwnerIdentity } from '@ledgerline/ownership';
import type { ConsumeRequest, ConsumerStatsSchema, SubscriptionType } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import type { WriterSettings } from './config.js';
import type { WriterMetrics } from './metrics.js';
import type { OwnedTopic } from './owned-topic.js';
import type { DrainOutcome } from './owner-drain.js';
import type { TopicLoadOptions, TopicRegistry } from './topic-registry.js';
import type { TransferOutcome } from './topic-transfer.js';

// The services, the gauges and the load meter each take the part of the writer owner they read, declared
// here, so none of them imports the WriterOwner class that builds them (WriterOwner has every member).

/** What a subscription's live side (its consumers) reports for topic stats. */
export interface LiveSubscriptionStats {
  type: SubscriptionType;
  unackedMessages: number;
  blockedOnUnacked: boolean;
  msgRateOut: number;
  msgThroughputOut: number;
  redeliveredMessages: number;
  consumers: MessageInitShape<typeof ConsumerStatsSchema>[];
}

/** Where a request's topic comes from: loaded here when this instance should own it. */
export interface TopicSource {
  topic(name: string, options?: TopicLoadOptions): Promise<OwnedTopic>;
}

/** What CursorsService reads: a cursor with consumers connected here is not deleted under them. */
export interface CursorsOwner extends TopicSource {
  connectedConsumers(topic: OwnedTopic, subscription: string): number;
  unsubscribed(topic: OwnedTopic, subscription: string): Promise<void>;
}

/** What GetTopicStats reads. */
export interface StatsOwner extends TopicSource {
  readonly identity: Pick<OwnerIdentity, 'advertisedAddress'>;
  subscriptionStats(topic: OwnedTopic, subscription: string): Promise<LiveSubscriptionStats | undefined>;
}

/** What TopicsService reads. */
export interface TopicsOwner extends CursorsOwner, StatsOwner {
  readonly settings: WriterSettings;
  readonly metrics: WriterMetrics;
  readonly registry: TopicRegistry;
  readonly clients: Pick<MetadataClients, 'lookup'>;
  readonly identity: Pick<OwnerIdentity, 'instanceId' | 'advertisedAddress'>;
  /** Aborted when draining starts. */
  readonly drainSignal: AbortSignal;
  consume(requests: AsyncIterable<ConsumeRequest>, context: CallContext): AsyncIterable<ConsumeOutput>;
  seek(topic: OwnedTopic, subscription: string, target: SeekTarget): Promise<Position>;
}

/** What the load meter reads: the topics loaded now and the traffic counters. */
export interface LoadedTopicsOwner {
  readonly registry: Pick<TopicRegistry, 'all'>;
  readonly metrics: WriterMetrics;
}

/** What the per-subscription gauges read. */
export interface GaugedOwner extends LoadedTopicsOwner {
  subscriptionStats(topic: OwnedTopic, subscription: string): Promise<LiveSubscriptionStats | undefined>;
}

/** What OwnerControlService reads: transfers and drains. */
export interface ControlledOwner extends TopicSource {
  transfer(name: string, targetInstanceId: string): Promise<TransferOutcome>;
  drainTopics(resume: boolean): Promise<DrainOutcome>;
}
