import { LedgerlineError } from '@ledgerline/errors';
import { InitialPosition, SubscriptionType as ProtoSubscriptionType, type Subscribe } from '@ledgerline/proto';
import { SubscriptionType, type ConsumerOptions, type ConsumerSink } from '@ledgerline/subscriptions';
import { safeNumber } from './proto-mapping.js';
import { OwnerReason } from './reasons.js';
import type { WriterEntry } from './writer-entry.js';

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

/** Where a subscription made by a Subscribe request starts: an offset, or the earliest or latest entry. */
export type SubscriptionStart = { initialPosition: 'earliest' | 'latest' } | { offset: number };

/** The start a Subscribe asks for; it applies only when the subscription does not exist yet. */
export function subscriptionStart(subscribe: Subscribe): SubscriptionStart {
  if (subscribe.startOffset !== undefined) return { offset: safeNumber(subscribe.startOffset, 'start_offset') };
  return { initialPosition: subscribe.initialPosition === InitialPosition.EARLIEST ? 'earliest' : 'latest' };
}

/** The subscription type a Subscribe names; INVALID_ARGUMENT for one it does not know. */
export function subscriptionTypeOf(request: Subscribe): SubscriptionType {
  const type = TYPES.get(request.type);
  if (type === undefined) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      OwnerReason.INVALID_REQUEST,
      `unknown subscription type ${request.type}`,
    );
  }
  return type;
}

/** A subscription's type as topic stats report it; UNSPECIFIED while no consumer has fixed it. */
export function protoSubscriptionType(type: SubscriptionType | undefined): ProtoSubscriptionType {
  return type === undefined ? ProtoSubscriptionType.UNSPECIFIED : PROTO_TYPES.get(type)!;
}

/** A consumer's options from its Subscribe request: the same on both kinds of owner. */
export function consumerOptions<E extends WriterEntry>(
  request: Subscribe,
  type: SubscriptionType,
  sink: ConsumerSink<E>,
): ConsumerOptions<E> {
  const maxRedeliveries = request.deadLetter?.maxRedeliveries ?? 0;
  return {
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
    sink,
  };
}
