import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { InitialPosition, type Ack, type ConsumeRequest, type ConsumeResponseSchema } from '@ledgerline/proto';
import type { CallContext } from '@ledgerline/rpc';
import { AsyncQueue } from '../async-queue.js';
import { FakeSubscription, type FakeConsumer } from './fake-subscription.js';
import type { FakeTopic } from './fake-topic.js';
import { abortable, canonicalTopic, FakeClusterReason, type OpenStream, type OwnerHost } from './fake-rpc.js';

type ConsumeResponseInit = MessageInitShape<typeof ConsumeResponseSchema>;
type SubscribeCommand = NonNullable<Extract<ConsumeRequest['command'], { case: 'subscribe' }>['value']>;

/** An Ack command an owner read, for assertions (resends carry the same request id). */
export interface ReceivedAck {
  readonly owner: number;
  readonly requestId: bigint;
  /**
   * Entry ids acknowledged whole, by position, by range (each entry of it, when the owner takes
   * ranges) or cumulatively (the cumulative position's entry id).
   */
  readonly entryIds: readonly bigint[];
  /** The Ack's ranges as sent, `[first, last]` entry ids; an owner that predates ranges never sees them. */
  readonly ranges: readonly (readonly [bigint, bigint])[];
  /** Whether the owner dropped it (`loseAcks`). */
  readonly lost: boolean;
  /** Whether the client let the receipt wait for the owner's next cursor snapshot. */
  readonly receiptWithNextSnapshot: boolean;
}

/**
 * The Consume streams of the fake owners: subscriptions shared by every
 * owner (as real owners share the cursor store), commands applied as they
 * come, and ack receipts that can be held back, released later, or lost
 * together with the acks they confirm.
 */
export class FakeConsumeService {
  /** Subscriptions by `topic\nsubscription`. */
  readonly subscriptions = new Map<string, FakeSubscription>();
  /** Every Ack command the owners read, in order. */
  readonly acksReceived: ReceivedAck[] = [];
  holdAckReceipts = false;
  loseAcks = false;
  /**
   * Whether Subscribed says accepts_ack_ranges and Ack.ranges are applied. False plays an owner that
   * predates ranges: it says nothing and skips the field, as protobuf skips a field it does not know.
   */
  acceptsAckRanges = true;
  private readonly heldReceipts: { consumer: FakeConsumer; requestId: bigint }[] = [];
  private readonly consumeStreams = new WeakSet<OpenStream>();

  constructor(private readonly host: OwnerHost) {}

  isConsumeStream(stream: OpenStream): boolean {
    return this.consumeStreams.has(stream);
  }

  subscription(topic: string, subscription: string): FakeSubscription | undefined {
    return this.subscriptions.get(`${canonicalTopic(topic)}\n${subscription}`);
  }

  /** Sends the receipts held so far on the streams they belong to (if still open), and holds no more. */
  releaseAckReceipts(): void {
    this.holdAckReceipts = false;
    for (const { consumer, requestId } of this.heldReceipts.splice(0)) {
      consumer.out.push({ event: { case: 'ackReceipt', value: { requestId } } });
    }
  }

  async *consume(
    owner: number,
    requests: AsyncIterable<ConsumeRequest>,
    context: CallContext,
  ): AsyncGenerator<ConsumeResponseInit> {
    const stream = this.host.openStream(owner, context);
    this.consumeStreams.add(stream);
    const iterator = requests[Symbol.asyncIterator]();
    try {
      const first = await abortable(iterator.next(), stream.abort.signal);
      if (first.done === true || first.value.command.case !== 'subscribe') {
        throw new LedgerlineError(
          'INVALID_ARGUMENT',
          FakeClusterReason.SUBSCRIBE_FIRST,
          'the first command must be subscribe',
        );
      }
      const request = first.value.command.value;
      const name = canonicalTopic(request.topic);
      stream.topic = name;
      const subscription = this.subscriptionFor(this.host.owned(owner, name), name, request);
      const consumer: FakeConsumer = {
        name: request.consumerName,
        out: new AsyncQueue<ConsumeResponseInit>(),
        permits: 0,
        maxEntriesPerResponse: request.maxEntriesPerResponse,
      };
      subscription.attach(consumer);
      try {
        consumer.out.push({
          event: {
            case: 'subscribed',
            value: {
              topic: name,
              active: subscription.consumers[0] === consumer,
              acceptsAckRanges: this.acceptsAckRanges,
            },
          },
        });
        stream.abort.signal.addEventListener('abort', () => consumer.out.fail(stream.abort.signal.reason), {
          once: true,
        });
        void (async () => {
          for (;;) {
            const next = await abortable(iterator.next(), stream.abort.signal);
            if (next.done === true) return consumer.out.end();
            this.command(owner, subscription, consumer, next.value);
          }
        })().catch((error: unknown) => consumer.out.fail(error));
        yield* consumer.out;
      } finally {
        subscription.detach(consumer);
      }
    } finally {
      this.host.closeStream(stream);
    }
  }

  private subscriptionFor(topic: FakeTopic, name: string, request: SubscribeCommand): FakeSubscription {
    const key = `${name}\n${request.subscription}`;
    let subscription = this.subscriptions.get(key);
    if (subscription === undefined) {
      const start =
        request.startOffset !== undefined
          ? topic.indexOfOffset(request.startOffset)
          : request.initialPosition === InitialPosition.EARLIEST
            ? 0
            : topic.entries.length;
      const created = new FakeSubscription(topic, request.type, start);
      this.subscriptions.set(key, created);
      topic.onAppend(() => created.dispatch());
      subscription = created;
    }
    return subscription;
  }

  private command(owner: number, subscription: FakeSubscription, consumer: FakeConsumer, request: ConsumeRequest) {
    const command = request.command;
    if (command.case === 'flow') {
      consumer.permits += command.value.permits;
      subscription.dispatch();
    } else if (command.case === 'ack') {
      this.ack(owner, subscription, consumer, command.value);
    } else if (command.case === 'nack') {
      subscription.nack(command.value.positions.map((position) => position.entryId));
    } else if (command.case === 'redeliverUnacknowledged') {
      subscription.redeliverAll(consumer);
    }
  }

  private ack(owner: number, subscription: FakeSubscription, consumer: FakeConsumer, received: Ack): void {
    const ack = this.acceptsAckRanges ? received : { ...received, ranges: [] };
    const ranges = ack.ranges.map((r) => [r.firstEntryId, r.lastEntryId] as const);
    const entryIds = [...ack.positions, ...(ack.cumulative === undefined ? [] : [ack.cumulative])].map(
      (position) => position.entryId,
    );
    for (const [first, last] of ranges) for (let entryId = first; entryId <= last; entryId++) entryIds.push(entryId);
    const { requestId, receiptWithNextSnapshot } = ack;
    this.acksReceived.push({ owner, requestId, entryIds, ranges, lost: this.loseAcks, receiptWithNextSnapshot });
    if (this.loseAcks) return;
    subscription.ack(ack);
    if (ack.requestId === 0n) return;
    if (this.holdAckReceipts) this.heldReceipts.push({ consumer, requestId: ack.requestId });
    else consumer.out.push({ event: { case: 'ackReceipt', value: { requestId: ack.requestId } } });
  }
}
