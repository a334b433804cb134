import { DeliveryStage } from './metrics.js';
import { LedgerlineError } from '@ledgerline/errors';
import type { CursorStart } from '@ledgerline/managed-ledger';
import {
  checkSubscriptionName,
  consumeStream,
  consumerOptions,
  entryDelivery,
  OwnerReason,
  protoSubscriptionType,
  subscriptionStart,
  subscriptionTypeOf,
  type WireConsumeSession,
  type WireEntry,
  type WriterEntry,
} from '@ledgerline/ownership';
import type { Subscribe } from '@ledgerline/proto';
import { Subscription, type ConsumerSink, type DeadLetterPolicy, type Delivery } from '@ledgerline/subscriptions';
import { TopicName } from '@ledgerline/naming';
import { CursorSource } from './cursor-source.js';
import type { OwnedTopic } from './owned-topic.js';
import type { LiveSubscriptionStats } from './owner-view.js';
import type { ConsumeBackend, WriterOwner } from './writer-owner.js';

/** The subscriptions of the owner's topics, made on first subscribe and closed with their topic. */
class TopicSubscriptions {
  private readonly byTopic = new Map<OwnedTopic, Map<string, Promise<Subscription<WriterEntry>>>>();

  constructor(private readonly owner: WriterOwner) {}

  get(topic: OwnedTopic, name: string): Promise<Subscription<WriterEntry>> | undefined {
    return this.byTopic.get(topic)?.get(name);
  }

  open(topic: OwnedTopic, name: string, start: CursorStart): Promise<Subscription<WriterEntry>> {
    // A topic found before it was unloaded can reach here after: its unload has closed every
    // subscription it had, and one opened now would keep its consumers (and their streams) forever.
    try {
      topic.checkLoaded();
    } catch (error) {
      return Promise.reject(error);
    }
    let subscriptions = this.byTopic.get(topic);
    if (subscriptions === undefined) {
      const made = new Map<string, Promise<Subscription<WriterEntry>>>();
      subscriptions = made;
      this.byTopic.set(topic, made);
      topic.onUnload((error) => {
        this.byTopic.delete(topic);
        for (const opening of made.values()) void opening.then((s) => s.close(error)).catch(() => undefined);
      });
    }
    const known = subscriptions.get(name);
    if (known !== undefined) return known;
    const opening = topic.ledger.openCursor(name, { start }).then(
      (cursor) =>
        new Subscription<WriterEntry>({
          name,
          source: new CursorSource(topic.ledger, cursor, topic),
          deadLetter: (entry, policy) => this.deadLetter(topic, name, entry, policy),
          partitionIndex: Math.max(0, TopicName.parse(topic.name).partitionIndex),
          onError: (error) =>
            this.owner.logger.warn({ topic: topic.name, subscription: name, reason: error.reason }, error.message),
        }),
    );
    subscriptions.set(name, opening);
    opening.catch(() => subscriptions.delete(name));
    return opening;
  }

  /** Closes a subscription (unsubscribe, delete) so its consumers end. */
  async drop(topic: OwnedTopic, name: string, error: LedgerlineError): Promise<void> {
    const opening = this.byTopic.get(topic)?.get(name);
    this.byTopic.get(topic)?.delete(name);
    await opening?.then((s) => s.close(error)).catch(() => undefined);
  }

  /** Publishes a dead-lettered entry as it is stored to `<topic>-<subscription>-DLQ` (created when missing). */
  private async deadLetter(topic: OwnedTopic, subscription: string, entry: WriterEntry, policy: DeadLetterPolicy) {
    const target = policy.topic ?? `${topic.name}-${subscription}-DLQ`;
    let dlq: OwnedTopic;
    try {
      dlq = await this.owner.topic(target);
    } catch (thrown) {
      if (LedgerlineError.from(thrown).code !== 'NOT_FOUND') throw thrown;
      await this.owner.clients.admin.createTopic({ topic: target }).catch((error: unknown) => {
        if (LedgerlineError.from(error).code !== 'ALREADY_EXISTS') throw error;
      });
      dlq = await this.owner.topic(target);
    }
    await dlq.appendStored(entry.stored.payload, entry.numMessages);
  }
}

/** The consume side of a writer owner: Consume streams over the subscriptions lib. */
export function consumeBackend(owner: WriterOwner): ConsumeBackend {
  const subscriptions = new TopicSubscriptions(owner);
  return {
    consume: (requests, context) =>
      consumeStream<WriterEntry>(requests, context, (request, sink) => subscribe(owner, subscriptions, request, sink)),
    connectedConsumers: (topic, name) => liveCount(subscriptions, topic, name),
    subscriptionStats: (topic, name) => liveStats(subscriptions, topic, name),
    seek: async (topic, name, target) => {
      const live = await subscriptions.get(topic, name)?.catch(() => undefined);
      return live === undefined ? undefined : live.seek(target);
    },
    unsubscribed: (topic, name) =>
      subscriptions.drop(
        topic,
        name,
        new LedgerlineError('NOT_FOUND', OwnerReason.SUBSCRIPTION_NOT_FOUND, `${name} was deleted`),
      ),
  };
}

const settled = new WeakMap<Promise<Subscription<WriterEntry>>, Subscription<WriterEntry>>();

function peek(
  subscriptions: TopicSubscriptions,
  topic: OwnedTopic,
  name: string,
): Subscription<WriterEntry> | undefined {
  const opening = subscriptions.get(topic, name);
  return opening === undefined ? undefined : settled.get(opening);
}

function liveCount(subscriptions: TopicSubscriptions, topic: OwnedTopic, name: string): number {
  return peek(subscriptions, topic, name)?.consumerCount ?? 0;
}

async function liveStats(
  subscriptions: TopicSubscriptions,
  topic: OwnedTopic,
  name: string,
): Promise<LiveSubscriptionStats | undefined> {
  const subscription = peek(subscriptions, topic, name);
  if (subscription === undefined) return undefined;
  const snapshot = await subscription.stats();
  return {
    type: protoSubscriptionType(subscription.type),
    unackedMessages: snapshot.unackedMessages,
    blockedOnUnacked: snapshot.blockedOnUnacked,
    msgRateOut: snapshot.msgRateOut,
    msgThroughputOut: snapshot.msgThroughputOut,
    redeliveredMessages: snapshot.redeliveredMessages,
    consumers: snapshot.consumers.map((c) => ({
      name: c.name,
      unackedMessages: BigInt(c.unackedMessages),
      availablePermits: c.availablePermits,
      blockedOnUnacked: c.blockedOnUnacked,
      msgRateOut: c.msgRateOut,
      active: c.active,
    })),
  };
}

async function subscribe(
  owner: WriterOwner,
  subscriptions: TopicSubscriptions,
  request: Subscribe,
  sink: ConsumerSink<WriterEntry>,
): Promise<WireConsumeSession<WriterEntry>> {
  const topic = await owner.topic(request.topic);
  const name = checkSubscriptionName(request.subscription);
  const type = subscriptionTypeOf(request);
  const opening = subscriptions.open(topic, name, subscriptionStart(request));
  const subscription = await opening;
  settled.set(opening, subscription);
  const consumer = subscription.addConsumer(consumerOptions(request, type, sink));
  const cursor = topic.ledger.getCursor(name);
  return {
    topic: topic.name,
    consumer,
    markDelete: () => cursor?.markDeletePosition,
    flush: async () => cursor?.flush(),
    persisted: async () => cursor?.whenPersisted(),
    toWire: (delivery) => wireDelivery(owner, topic, delivery),
  };
}

/** A delivery ready for the wire, counted out: by the topic's own counter children, looked up when it loaded. */
function wireDelivery(owner: WriterOwner, topic: OwnedTopic, delivery: Delivery<WriterEntry>): WireEntry {
  const wire = entryDelivery(delivery);
  if (delivery.redeliveryCount === 0) {
    const waitedMs = Date.now() - delivery.entry.stored.brokerTimestampMs;
    owner.metrics.stageLatency[DeliveryStage.APPENDED_TO_DELIVERED].observe(Math.max(0, waitedMs) / 1000);
    const { position } = delivery.entry;
    owner.metrics.trace?.dispatched(position.ledgerId, position.entryId);
  }
  topic.delivered(wire.messageCount, wire.payloadBytes);
  return wire;
}
