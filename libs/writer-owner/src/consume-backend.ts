import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type { Position } from '@ledgerline/cursor-codec';
import type { CursorStart } from '@ledgerline/managed-ledger';
import {
  InitialPosition,
  SubscriptionType as ProtoSubscriptionType,
  type ConsumeRequest,
  type ConsumeResponseSchema,
  type Subscribe,
} from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import {
  Subscription,
  SubscriptionType,
  type Consumer,
  type DeadLetterPolicy,
  type Delivery,
} from '@ledgerline/subscriptions';
import { TopicName } from '@ledgerline/naming';
import { CursorSource, type WriterEntry } from './cursor-source.js';
import type { OwnedTopic } from './owned-topic.js';
import { positionFromRequest, positionMessage, safeNumber } from './proto-mapping.js';
import { WriterReason } from './reasons.js';
import { checkSubscriptionName } from './topics-service.js';
import type { ConsumeBackend, LiveSubscriptionStats, WriterOwner } from './writer-owner.js';

type Response = MessageInitShape<typeof ConsumeResponseSchema>;

const TYPES = new Map<ProtoSubscriptionType, SubscriptionType>([
  [ProtoSubscriptionType.UNSPECIFIED, SubscriptionType.EXCLUSIVE],
  [ProtoSubscriptionType.EXCLUSIVE, SubscriptionType.EXCLUSIVE],
  [ProtoSubscriptionType.FAILOVER, SubscriptionType.FAILOVER],
  [ProtoSubscriptionType.SHARED, SubscriptionType.SHARED],
  [ProtoSubscriptionType.KEY_SHARED, SubscriptionType.KEY_SHARED],
]);
const PROTO_TYPES = new Map(
  [...TYPES].filter(([p]) => p !== ProtoSubscriptionType.UNSPECIFIED).map(([p, t]) => [t, p]),
);

function bad(message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', WriterReason.INVALID_REQUEST, message);
}

function startOf(subscribe: Subscribe): CursorStart {
  if (subscribe.startOffset !== undefined) return { offset: safeNumber(subscribe.startOffset, 'start_offset') };
  return { initialPosition: subscribe.initialPosition === InitialPosition.EARLIEST ? 'earliest' : 'latest' };
}

/** The subscriptions of the owner's topics, made on first subscribe and closed with their topic. */
class TopicSubscriptions {
  private readonly byTopic = new Map<OwnedTopic, Map<string, Promise<Subscription<WriterEntry>>>>();

  constructor(private readonly owner: WriterOwner) {}

  get(topic: OwnedTopic, name: string): Promise<Subscription<WriterEntry>> | undefined {
    return this.byTopic.get(topic)?.get(name);
  }

  open(topic: OwnedTopic, name: string, start: CursorStart): Promise<Subscription<WriterEntry>> {
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
          source: new CursorSource(topic.ledger, cursor),
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
    consume: (requests, context) => consumeStream(owner, subscriptions, requests, context),
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
        new LedgerlineError('NOT_FOUND', WriterReason.SUBSCRIPTION_NOT_FOUND, `${name} was deleted`),
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
    type: subscription.type === undefined ? ProtoSubscriptionType.UNSPECIFIED : PROTO_TYPES.get(subscription.type)!,
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

/** Outgoing events of one consumer, waited on by the stream's generator. */
class Outbox {
  private readonly items: Response[] = [];
  private wake: (() => void) | undefined;
  closedWith: LedgerlineError | undefined;
  ended = false;

  push(item: Response): void {
    this.items.push(item);
    this.notify();
  }

  close(error: LedgerlineError | undefined): void {
    if (error !== undefined) this.closedWith ??= error;
    this.ended = true;
    this.notify();
  }

  notify(): void {
    this.wake?.();
    this.wake = undefined;
  }

  async *drain(): AsyncGenerator<Response> {
    for (;;) {
      const next = this.items.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

async function subscribe(
  owner: WriterOwner,
  subscriptions: TopicSubscriptions,
  request: Subscribe,
  outbox: Outbox,
): Promise<{ topic: OwnedTopic; consumer: Consumer<WriterEntry> }> {
  const topic = await owner.topic(request.topic);
  const name = checkSubscriptionName(request.subscription);
  const type = TYPES.get(request.type);
  if (type === undefined) throw bad(`unknown subscription type ${request.type}`);
  const opening = subscriptions.open(topic, name, startOf(request));
  const subscription = await opening;
  settled.set(opening, subscription);
  const maxRedeliveries = request.deadLetter?.maxRedeliveries ?? 0;
  const consumer = subscription.addConsumer({
    name: request.consumerName === '' ? `consumer-${Math.random().toString(36).slice(2, 10)}` : request.consumerName,
    type,
    ackTimeoutMs: safeNumber(request.ackTimeoutMs, 'ack_timeout_ms'),
    nackRedeliveryDelayMs: safeNumber(request.nackRedeliveryDelayMs, 'nack_redelivery_delay_ms'),
    ...(maxRedeliveries > 0
      ? {
          deadLetterPolicy: {
            maxRedeliveries,
            ...(request.deadLetter?.topic ? { topic: request.deadLetter.topic } : {}),
          },
        }
      : {}),
    sink: {
      deliver: (delivery) => outbox.push(deliveryMessage(owner, topic, delivery)),
      activeChanged: (active) => outbox.push({ event: { case: 'activeConsumerChange', value: { active } } }),
      close: (error) => outbox.close(error),
    },
  });
  return { topic, consumer };
}

function deliveryMessage(owner: WriterOwner, topic: OwnedTopic, delivery: Delivery<WriterEntry>): Response {
  const { entry, batchIndexes } = delivery;
  const wanted = batchIndexes === undefined ? undefined : new Set(batchIndexes);
  const messages = wanted === undefined ? entry.messages : entry.messages.filter((m) => wanted.has(m.batchIndex ?? -1));
  const stored = entry.stored;
  const bytes = messages.reduce((sum, m) => sum + (m.payload?.length ?? 0), 0);
  owner.metrics.messagesOut.inc({ topic: topic.name }, messages.length);
  owner.metrics.bytesOut.inc({ topic: topic.name }, bytes);
  topic.rateOut.record(messages.length, bytes);
  return {
    event: {
      case: 'entry',
      value: {
        position: positionMessage(stored.position),
        firstOffset: BigInt(stored.firstOffset),
        lastOffset: BigInt(stored.lastOffset),
        brokerTimestampMs: BigInt(stored.brokerTimestampMs),
        numMessages: stored.numMessages,
        redeliveryCount: delivery.redeliveryCount,
        messages,
      },
    },
  };
}

async function handle(
  request: ConsumeRequest,
  consumer: Consumer<WriterEntry>,
  outbox: Outbox,
  flush: () => Promise<void>,
): Promise<void> {
  const command = request.command;
  switch (command.case) {
    case 'flow':
      consumer.flow(command.value.permits);
      return;
    case 'ack': {
      const ack = command.value;
      await consumer.acknowledge({
        positions: ack.positions.map((p) => positionFromRequest(p)),
        batchIndexAcks: ack.batchIndexAcks.map((b) => ({
          position: positionFromRequest(b.position, 'batch_index_acks.position'),
          ackedIndexes: b.ackedIndexes,
          batchSize: b.batchSize,
        })),
        ...(ack.cumulative === undefined ? {} : { cumulative: positionFromRequest(ack.cumulative, 'cumulative') }),
      });
      // As Pulsar's ack receipts: the receipt says the cursor persisted the ack, so it survives a crash of this owner.
      if (ack.requestId !== 0n) {
        await flush();
        outbox.push({ event: { case: 'ackReceipt', value: { requestId: ack.requestId } } });
      }
      return;
    }
    case 'nack':
      consumer.nack(command.value.positions.map((p): Position => positionFromRequest(p)));
      return;
    case 'redeliverUnacknowledged':
      consumer.redeliverUnacknowledged();
      return;
    case 'subscribe':
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        WriterReason.ALREADY_SUBSCRIBED,
        'a Consume stream subscribes once',
      );
    default:
      throw bad('a consume request carries subscribe, flow, ack, nack or redeliver_unacknowledged');
  }
}

/**
 * One Consume stream: the first request subscribes (creating the
 * subscription's cursor when it does not exist); then flow permits, acks,
 * nacks and redelivery requests go to the consumer, and deliveries,
 * activity changes and ack receipts come back. The stream ends with the
 * consumer's close reason (TOPIC_UNLOADED when the topic leaves this owner),
 * or when the client ends it; a malformed request ends it INVALID_ARGUMENT.
 */
async function* consumeStream(
  owner: WriterOwner,
  subscriptions: TopicSubscriptions,
  requests: AsyncIterable<ConsumeRequest>,
  context: CallContext,
): AsyncIterable<Response> {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true) return;
  if (first.value.command.case !== 'subscribe') throw bad('the first consume request must be subscribe');
  const outbox = new Outbox();
  const { topic, consumer } = await subscribe(owner, subscriptions, first.value.command.value, outbox);
  const cursor = topic.ledger.getCursor(first.value.command.value.subscription);
  const flush = async (): Promise<void> => cursor?.flush();
  yield {
    event: {
      case: 'subscribed',
      value: {
        topic: topic.name,
        ...(cursor === undefined ? {} : { markDelete: positionMessage(cursor.markDeletePosition) }),
        active: consumer.active,
      },
    },
  };
  const stop = (): void => outbox.close(undefined);
  context.signal.addEventListener('abort', stop, { once: true });
  void (async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done === true || outbox.ended) return;
      await handle(next.value, consumer, outbox, flush);
    }
  })().then(
    () => outbox.close(undefined),
    (error: unknown) => outbox.close(LedgerlineError.from(error)),
  );
  try {
    yield* outbox.drain();
  } finally {
    context.signal.removeEventListener('abort', stop);
    consumer.close();
  }
  if (outbox.closedWith !== undefined && !context.signal.aborted) throw outbox.closedWith;
}
