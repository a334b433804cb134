import type { MessageInitShape } from '@bufbuild/protobuf';
import { DATA_PATH_LIMITS, type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import type { ConsumeRequest, ConsumeResponseSchema, Subscribe } from '@ledgerline/proto';
import { ManagedLedgerReason } from '@ledgerline/managed-ledger';
import type { CallContext, EncodedMessage } from '@ledgerline/rpc';
import {
  checkAckRequest,
  checkPositions,
  type Consumer,
  type ConsumerSink,
  type Delivery,
  type DispatchEntry,
} from '@ledgerline/subscriptions';
import { encodeEntries, WireEntry, wireEntryBytes } from './consume-response.js';
import { positionMessage } from './proto-mapping.js';
import { OwnerReason } from './reasons.js';
import { topicUnloaded } from './owner-errors.js';

/** A response the stream sends as objects: the events other than entries (subscribed, activity changes, receipts). */
type EventResponse = MessageInitShape<typeof ConsumeResponseSchema>;
/** What a Consume stream sends: an event as objects, or entries written by hand (see consume-response.ts). */
export type ConsumeOutput = EventResponse | EncodedMessage<typeof ConsumeResponseSchema>;

function bad(message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, message);
}

/**
 * What an owner made of a Consume stream's subscribe request. Its deliveries
 * are written by hand: the stream coalesces them and sends each response as
 * one buffer (encodeEntries), never as objects.
 */
export interface WireConsumeSession<E extends DispatchEntry> {
  /** The topic name the Subscribed answer carries. */
  topic: string;
  consumer: Consumer<E>;
  markDelete(): Position | undefined;
  /** Resolves once the acks taken so far are persisted (ack receipts wait for it). */
  flush(): Promise<void>;
  /**
   * Resolves once the acks taken so far are persisted by the writes the
   * owner makes anyway (an Ack's receipt_with_next_snapshot); without it, flush.
   */
  persisted?(): Promise<void>;
  /** The delivery, ready to be written into a response. */
  toWire(delivery: Delivery<E>): WireEntry;
}

/** Subscribes for a Consume stream, its consumer reaching the client through `sink`. */
export type OpenWireConsumeSession<E extends DispatchEntry> = (
  subscribe: Subscribe,
  sink: ConsumerSink<E>,
) => Promise<WireConsumeSession<E>>;

/**
 * The most entries one ConsumeResponse carries (also bounded by what the
 * subscriber reads, Subscribe.max_entries_per_response), and the most bytes
 * on the wire (every message's own fields counted, not only payloads: the
 * exact size of the entries written by hand): well under the gRPC message
 * limit (4 MiB), so coalescing never makes a response the transport refuses.
 * An entry larger than that goes alone.
 */
export const MAX_ENTRIES_PER_CONSUME_RESPONSE = DATA_PATH_LIMITS.maxEntriesPerConsumeResponse;
export const MAX_CONSUME_RESPONSE_BYTES = DATA_PATH_LIMITS.maxConsumeResponseBytes;

/** Outgoing events of one consumer, waited on by the stream's generator: its deliveries, and its other events. */
class Outbox {
  private items: (EventResponse | WireEntry)[] = [];
  private head = 0;
  private wake: (() => void) | undefined;
  closedWith: LedgerlineError | undefined;
  ended = false;

  push(item: EventResponse | WireEntry): void {
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

  /** Yields the events in order; consecutive entries ready at once share a response, up to maxEntries. */
  async *drain(maxEntries: number): AsyncGenerator<ConsumeOutput> {
    for (;;) {
      if (this.head < this.items.length) {
        yield this.take(maxEntries);
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private take(maxEntries: number): ConsumeOutput {
    const first = this.items[this.head++]!;
    const response = first instanceof WireEntry ? encodeEntries(this.takeWire(first, maxEntries)) : first;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    }
    return response;
  }

  /** `first` and the entries that follow it, within the bounds of one response (an event between entries ends it). */
  private takeWire(first: WireEntry, maxEntries: number): WireEntry[] {
    const entries = [first];
    let sizeBytes = wireEntryBytes(first);
    while (this.head < this.items.length && entries.length < maxEntries) {
      const next = this.items[this.head]!;
      if (!(next instanceof WireEntry)) break;
      const nextBytes = wireEntryBytes(next);
      if (sizeBytes + nextBytes > MAX_CONSUME_RESPONSE_BYTES) break;
      sizeBytes += nextBytes;
      entries.push(next);
      this.head++;
    }
    return entries;
  }
}

/**
 * Receipts one stream may owe at once. Past it the stream reads no request
 * until they are sent: a client that keeps asking while the cursor cannot
 * write holds no more than this many waiting answers here.
 */
export const MAX_RECEIPTS_OWED = 1_000;

/**
 * Ack receipts of one stream: each is sent once the cursor has persisted
 * its ack, while the stream goes on reading requests (flow permits and later
 * acks are not held behind a store write). A failed persist ends the stream
 * with its error, as a failed request does.
 */
class Receipts {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly outbox: Outbox,
    private readonly session: Pick<WireConsumeSession<DispatchEntry>, 'flush' | 'persisted'>,
  ) {}

  /** With `withNextSnapshot`, the receipt rides on the cursor's next scheduled write rather than one of its own. */
  after(requestId: bigint, withNextSnapshot: boolean): void {
    const { session } = this;
    const durable = withNextSnapshot && session.persisted !== undefined ? session.persisted() : session.flush();
    const sent: Promise<void> = durable
      .then(
        () => this.outbox.push({ event: { case: 'ackReceipt', value: { requestId } } }),
        (error: unknown) => this.outbox.close(LedgerlineError.from(error)),
      )
      .then(() => void this.pending.delete(sent));
    this.pending.add(sent);
  }

  get owed(): number {
    return this.pending.size;
  }

  /** Every receipt owed so far sent (or the stream closed with why not). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }
}

async function handle<E extends DispatchEntry>(
  request: ConsumeRequest,
  consumer: Consumer<E>,
  receipts: Receipts,
): Promise<void> {
  const command = request.command;
  switch (command.case) {
    case 'flow':
      consumer.flow(command.value.permits);
      return;
    case 'ack': {
      const ack = command.value;
      // Checked here, where the request enters, into the type the layers below take without checking again.
      await consumer.acknowledgeChecked(checkAckRequest(ack));
      // As Pulsar's ack receipts: the receipt says the cursor persisted the ack, so it survives a crash of this owner.
      if (ack.requestId !== 0n) receipts.after(ack.requestId, ack.receiptWithNextSnapshot);
      return;
    }
    case 'nack':
      consumer.nackChecked(checkPositions(command.value.positions, 'nack'));
      return;
    case 'redeliverUnacknowledged':
      consumer.redeliverUnacknowledged();
      return;
    case 'subscribe':
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        OwnerReason.ALREADY_SUBSCRIBED,
        'a Consume stream subscribes once',
      );
    default:
      throw bad('a consume request carries subscribe, flow, ack, nack or redeliver_unacknowledged');
  }
}

const CLOSED_UNDER_THE_STREAM = new Set<string>([
  ManagedLedgerReason.CURSOR_CLOSED,
  ManagedLedgerReason.MANAGED_LEDGER_CLOSED,
]);

/**
 * A subscribe, ack, flush or read that met a cursor or managed ledger closed
 * under the stream means the topic is leaving this owner (unload, drain): the
 * client must hear TOPIC_UNLOADED and resubscribe where the topic went, not a
 * failure it cannot act on. Acks arriving while an unload closes the cursor
 * race the consumer's own TOPIC_UNLOADED, and either may end the stream first.
 */
function requestFailure(topic: string, error: LedgerlineError): LedgerlineError {
  return CLOSED_UNDER_THE_STREAM.has(error.reason) ? topicUnloaded(topic, `its ${error.message}`) : error;
}

/**
 * One Consume stream, the same on both kinds of owner: the first request
 * subscribes (through `open`); then flow permits, acks, nacks and
 * redelivery requests go to the consumer, and deliveries (encoded
 * responses, see consume-response.ts), activity changes and ack receipts
 * come back. The stream ends with the consumer's close reason
 * (TOPIC_UNLOADED when the topic leaves this owner), or when the client
 * ends it; a malformed request ends it INVALID_ARGUMENT.
 */
export async function* consumeStream<E extends DispatchEntry>(
  requests: AsyncIterable<ConsumeRequest>,
  context: CallContext,
  open: OpenWireConsumeSession<E>,
): AsyncIterable<ConsumeOutput> {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done === true) return;
  if (first.value.command.case !== 'subscribe') throw bad('the first consume request must be subscribe');
  const maxEntries = Math.min(first.value.command.value.maxEntriesPerResponse, MAX_ENTRIES_PER_CONSUME_RESPONSE);
  const outbox = new Outbox();
  // Deliveries need permits, which only come after the Subscribed answer: the session is there by then.
  const opened: { session?: WireConsumeSession<E> } = {};
  const sink: ConsumerSink<E> = {
    deliver: (delivery) => outbox.push(opened.session!.toWire(delivery)),
    activeChanged: (active) => outbox.push({ event: { case: 'activeConsumerChange', value: { active } } }),
    close: (error) => outbox.close(error),
  };
  const subscribe = first.value.command.value;
  const session = await open(subscribe, sink).catch((error: unknown) => {
    throw requestFailure(subscribe.topic, LedgerlineError.from(error));
  });
  opened.session = session;
  const { consumer } = session;
  const markDelete = session.markDelete();
  yield {
    event: {
      case: 'subscribed',
      value: {
        topic: session.topic,
        ...(markDelete === undefined ? {} : { markDelete: positionMessage(markDelete) }),
        active: consumer.active,
        // Both kinds of owner apply Ack.ranges (checkAckRequest takes them); a client sends them only on this word.
        acceptsAckRanges: true,
      },
    },
  };
  const receipts = new Receipts(outbox, session);
  const stop = (): void => outbox.close(undefined);
  context.signal.addEventListener('abort', stop, { once: true });
  void (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done === true || outbox.ended) return;
        await handle(next.value, consumer, receipts);
        if (receipts.owed >= MAX_RECEIPTS_OWED) await receipts.settled();
      }
    } finally {
      // A client that half-closes after its last acks still gets their receipts before the stream ends.
      await receipts.settled();
    }
  })().then(
    () => outbox.close(undefined),
    (error: unknown) => outbox.close(LedgerlineError.from(error)),
  );
  try {
    yield* outbox.drain(maxEntries);
  } finally {
    context.signal.removeEventListener('abort', stop);
    consumer.close();
  }
  if (outbox.closedWith !== undefined && !context.signal.aborted)
    throw requestFailure(session.topic, outbox.closedWith);
}
