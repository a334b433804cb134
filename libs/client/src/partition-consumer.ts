import { LedgerlineError } from '@ledgerline/errors';
import type { AckSchema, ConsumeRequestSchema, ConsumeResponse, Entry, SubscribeSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AsyncQueue } from './async-queue.js';
import type { ClientContext } from './client-context.js';
import { ClientReason } from './client-reason.js';
import { comparePositions, messagesOfEntry, positionKey, type Message } from './message.js';
import { rerouteAfter, withReconnect } from './reconnect.js';

type ConsumeRequestInit = MessageInitShape<typeof ConsumeRequestSchema>;
type AckInit = MessageInitShape<typeof AckSchema>;
type SubscribeInit = MessageInitShape<typeof SubscribeSchema>;

/**
 * Acknowledgements remembered to drop redeliveries of messages already
 * acknowledged (an ack in flight when the owner moved); the oldest are
 * forgotten first.
 */
export const MAX_REMEMBERED_ACKS = 100_000;
/**
 * Individual acks made within this long go to the owner as one Ack command
 * with one receipt (Pulsar's clients group acks too): an owner persists the
 * cursor before each receipt, so one command per message would cap
 * consumption at the owner's cursor-write rate.
 */
export const ACK_GROUP_TIME_MS = 10;
/** Most positions in one grouped Ack command; a full group goes at once. */
export const MAX_ACK_GROUP_SIZE = 1_000;
/**
 * Entries the consumer reads in one ConsumeResponse (Subscribe.max_entries_per_response): an owner
 * coalesces entries ready at once up to it; the receiver queue and flow permits bound them anyway.
 */
export const MAX_ENTRIES_PER_RESPONSE = 1_000;

/** An entry position. */
export interface Position {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
}

/** A message handed out, with what acknowledging it needs. */
export interface Delivered {
  readonly message: Message;
  readonly from: PartitionConsumer;
  readonly generation: number;
  readonly position: Position;
  readonly batchSize: number;
  /** The entry delivered before this one on this partition, for cumulative acks inside a batch. */
  readonly previous: Position | undefined;
}

interface PendingAck {
  readonly ack: AckInit;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Consumes one topic (or partition) over one Consume stream: subscribes,
 * grants flow permits as the application takes messages (half the receiver
 * queue at a time, as Pulsar does), acknowledges with receipts, and
 * reconnects when the owner moves or the connection drops. On reconnect it
 * resubscribes, resends acks not yet confirmed, and drops queued messages the
 * owner will redeliver.
 */
export class PartitionConsumer {
  private stream: { requests: AsyncQueue<ConsumeRequestInit>; abort: AbortController } | undefined;
  private restarting = false;
  private readonly subscribedWaiters: (() => void)[] = [];
  private generation = 0;
  private permitsToGrant = 0;
  private nextRequestId = 1n;
  private readonly pendingAcks = new Map<bigint, PendingAck>();
  private group:
    | {
        positions: Map<string, Position>;
        batchIndexAcks: Map<string, { position: Position; ackedIndexes: number[]; batchSize: number }>;
        waiters: { resolve(): void; reject(error: unknown): void }[];
        timer: NodeJS.Timeout;
      }
    | undefined;
  private readonly batchAcks = new Map<string, Set<number>>();
  private readonly acked = new Map<string, true>();
  private cumulativeUpTo: Position | undefined;
  private lastPosition: Position | undefined;
  private loop: Promise<void> | undefined;
  private closing = false;
  private resolveReady!: () => void;
  private rejectReady!: (error: unknown) => void;
  /** Settles with the first Subscribed answer, or the failure that prevented it. */
  readonly ready: Promise<void>;
  /** Failover: whether the owner made this consumer the active one. */
  active = false;

  constructor(
    private readonly context: ClientContext,
    readonly topic: string,
    readonly partition: number,
    private readonly subscribe: SubscribeInit,
    private readonly receiverQueueSize: number,
    private readonly incoming: AsyncQueue<Delivered>,
    private readonly closedError: () => LedgerlineError | undefined,
    private readonly onFatal: (error: LedgerlineError) => void,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => undefined);
  }

  start(): void {
    this.loop = this.connectionLoop();
  }

  /** Counts a message the application took, granting permits in halves of the receiver queue. */
  taken(delivered: Delivered): void {
    if (delivered.generation !== this.generation) return;
    this.grant(1);
  }

  /** Acknowledges one message; resolves once the owner confirms. */
  ack(delivered: Delivered): Promise<void> {
    const { position, batchSize } = delivered;
    const index = delivered.message.messageId.batchIndex;
    this.remember(`${positionKey(position.ledgerId, position.entryId)}:${index}`);
    if (batchSize <= 1) return this.groupAck(position, undefined);
    const key = positionKey(position.ledgerId, position.entryId);
    const indexes = this.batchAcks.get(key) ?? new Set<number>();
    indexes.add(index);
    if (indexes.size >= batchSize) {
      this.batchAcks.delete(key);
      return this.groupAck(position, undefined);
    }
    this.batchAcks.set(key, indexes);
    return this.groupAck(position, { position, ackedIndexes: [...indexes], batchSize });
  }

  /** Acknowledges this message and everything before it on this partition. */
  ackCumulative(delivered: Delivered): Promise<void> {
    const { position, batchSize, previous } = delivered;
    const index = delivered.message.messageId.batchIndex;
    if (batchSize <= 1 || index >= batchSize - 1) {
      this.cumulativeUpTo = position;
      return this.sendAck({ cumulative: position });
    }
    // Inside a batch: everything before this entry, plus this entry's indexes up to this one.
    const ackedIndexes = Array.from({ length: index + 1 }, (_, at) => at);
    for (const at of ackedIndexes) this.remember(`${positionKey(position.ledgerId, position.entryId)}:${at}`);
    if (previous !== undefined) this.cumulativeUpTo = previous;
    return this.sendAck({
      ...(previous === undefined ? {} : { cumulative: previous }),
      batchIndexAcks: [{ position, ackedIndexes, batchSize }],
    });
  }

  /** Asks for a message's redelivery after the subscription's nack delay. */
  nack(delivered: Delivered): void {
    this.stream?.requests.push({ command: { case: 'nack', value: { positions: [delivered.position] } } });
  }

  /** Asks the owner to redeliver everything delivered and not acknowledged. */
  redeliverUnacknowledged(): void {
    this.stream?.requests.push({ command: { case: 'redeliverUnacknowledged', value: {} } });
  }

  /**
   * After a seek: forget acknowledgements (the application asked to see
   * those messages again) and subscribe afresh, as Pulsar's consumers do, so
   * nothing queued or in flight from before the seek is handed out after it.
   * Resolves once the owner has accepted the new subscription.
   */
  afterSeek(): Promise<void> {
    this.acked.clear();
    this.batchAcks.clear();
    this.cumulativeUpTo = undefined;
    this.incoming.remove((delivered) => delivered.from === this);
    const resubscribed = new Promise<void>((resolve) => this.subscribedWaiters.push(resolve));
    this.restarting = true;
    this.stream?.abort.abort();
    return resubscribed;
  }

  /** Cancels the stream without waiting for anything (the client is closing). */
  abandon(): void {
    this.closing = true;
    this.failUnconfirmedAcks();
    this.stream?.abort.abort();
  }

  /**
   * Sends the acks still grouped, waits (within the operation timeout) for the owner to confirm the
   * acks in flight, then ends the stream. An ack still unconfirmed then fails, so no ack() promise
   * is left waiting: its message may be delivered again, to this subscription's next consumer.
   */
  async close(): Promise<void> {
    this.flushAcks(true);
    this.closing = true;
    const confirmed = [...this.pendingAcks.values()].map(
      (pending) =>
        new Promise<void>((resolve) => {
          const { resolve: settle, reject: fail } = pending;
          pending.resolve = () => (settle(), resolve());
          pending.reject = (error) => (fail(error), resolve());
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(confirmed),
      new Promise((resolve) => (timer = setTimeout(resolve, this.context.operationTimeoutMs))),
    ]);
    clearTimeout(timer);
    this.failUnconfirmedAcks();
    this.stream?.requests.end();
    await this.loop;
  }

  /** Fails every ack the owner has not confirmed (grouped or in flight): the consumer is gone. */
  private failUnconfirmedAcks(): void {
    const error =
      this.closedError() ??
      new LedgerlineError(
        'FAILED_PRECONDITION',
        ClientReason.CONSUMER_CLOSED,
        `the consumer of ${this.topic} closed before the owner confirmed the acknowledgement`,
      );
    const group = this.group;
    this.group = undefined;
    if (group !== undefined) {
      clearTimeout(group.timer);
      for (const waiter of group.waiters) waiter.reject(error);
    }
    for (const pending of this.pendingAcks.values()) pending.reject(error);
    this.pendingAcks.clear();
  }

  /** Adds an individual ack to the current group (a whole entry, or a batch's acked indexes so far). */
  private groupAck(
    position: Position,
    batchIndexAck: { position: Position; ackedIndexes: number[]; batchSize: number } | undefined,
  ): Promise<void> {
    const closed = this.closedError();
    if (closed !== undefined) return Promise.reject(closed);
    const group = (this.group ??= {
      positions: new Map(),
      batchIndexAcks: new Map(),
      waiters: [] as { resolve(): void; reject(error: unknown): void }[],
      timer: setTimeout(() => this.flushAcks(), ACK_GROUP_TIME_MS),
    });
    const key = positionKey(position.ledgerId, position.entryId);
    if (batchIndexAck === undefined) {
      group.batchIndexAcks.delete(key);
      group.positions.set(key, position);
    } else group.batchIndexAcks.set(key, batchIndexAck);
    const done = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    if (group.positions.size + group.batchIndexAcks.size >= MAX_ACK_GROUP_SIZE) this.flushAcks();
    return done;
  }

  /** Sends the current group of acks as one command (`closing`: as the consumer closes, which still sends it). */
  private flushAcks(closing = false): void {
    const group = this.group;
    if (group === undefined) return;
    this.group = undefined;
    clearTimeout(group.timer);
    const sent = this.sendAck(
      { positions: [...group.positions.values()], batchIndexAcks: [...group.batchIndexAcks.values()] },
      closing,
    );
    sent.then(
      () => group.waiters.forEach((waiter) => waiter.resolve()),
      (error: unknown) => group.waiters.forEach((waiter) => waiter.reject(error)),
    );
  }

  private sendAck(ack: AckInit, closing = false): Promise<void> {
    const closed = this.closedError();
    if (closed !== undefined && !closing) return Promise.reject(closed);
    // A cumulative ack goes after the individual ones made before it.
    if (ack.cumulative !== undefined) this.flushAcks();
    const requestId = this.nextRequestId++;
    const withId = { ...ack, requestId };
    return new Promise<void>((resolve, reject) => {
      this.pendingAcks.set(requestId, { ack: withId, resolve, reject });
      this.stream?.requests.push({ command: { case: 'ack', value: withId } });
    });
  }

  private remember(key: string): void {
    this.acked.set(key, true);
    if (this.acked.size > MAX_REMEMBERED_ACKS) this.acked.delete(this.acked.keys().next().value as string);
  }

  private grant(permits: number, now = false): void {
    this.permitsToGrant += permits;
    const threshold = now ? 1 : Math.max(1, Math.floor(this.receiverQueueSize / 2));
    if (this.stream !== undefined && this.permitsToGrant >= threshold) {
      this.stream.requests.push({ command: { case: 'flow', value: { permits: this.permitsToGrant } } });
      this.permitsToGrant = 0;
    }
  }

  private readonly stopped = (): LedgerlineError | undefined => this.closedError();

  private async connectionLoop(): Promise<void> {
    while (!this.closing && this.closedError() === undefined) {
      try {
        await withReconnect(this.context.reconnect, this.topic, this.context.lookup, this.stopped, () =>
          this.runStream(),
        );
      } catch (error) {
        const failure = LedgerlineError.from(error);
        for (const pending of this.pendingAcks.values()) pending.reject(failure);
        this.pendingAcks.clear();
        this.rejectReady(failure);
        if (!this.closing && this.closedError() === undefined) this.onFatal(failure);
        return;
      }
    }
  }

  private openStream(address: string, abort: AbortController) {
    const requests = new AsyncQueue<ConsumeRequestInit>();
    const connections = this.context.connections;
    const responses = connections
      .to(address)
      .topics.consume(requests, connections.callOptions(undefined, abort.signal));
    this.generation++;
    // Whatever the last stream queued and nobody took will be redelivered on this one.
    this.incoming.remove((delivered) => delivered.from === this);
    this.lastPosition = undefined;
    requests.push({
      command: { case: 'subscribe', value: { ...this.subscribe, maxEntriesPerResponse: MAX_ENTRIES_PER_RESPONSE } },
    });
    for (const pending of this.pendingAcks.values()) requests.push({ command: { case: 'ack', value: pending.ack } });
    requests.push({ command: { case: 'flow', value: { permits: this.receiverQueueSize } } });
    this.permitsToGrant = 0;
    this.stream = { requests, abort };
    return responses;
  }

  /** One stream's life; see PartitionProducer.runStream for the contract. */
  private async runStream(): Promise<void> {
    if (this.closing) return;
    const route = await this.context.lookup.route(this.topic);
    const abort = new AbortController();
    const responses = this.openStream(route.address, abort);
    let answered = false;
    try {
      for await (const response of responses) {
        this.onResponse(response);
        answered = true;
      }
      if (this.closing || this.takeRestart()) return;
      throw new LedgerlineError(
        'UNAVAILABLE',
        ClientReason.STREAM_ENDED,
        `the owner of ${this.topic} ended the consume stream`,
      );
    } catch (error) {
      if (this.closing || this.takeRestart()) return;
      if (answered && rerouteAfter(error, this.topic, this.context.lookup)) return;
      throw error;
    } finally {
      this.stream?.requests.end();
      this.stream = undefined;
      abort.abort();
    }
  }

  private takeRestart(): boolean {
    const restart = this.restarting;
    this.restarting = false;
    return restart;
  }

  private onResponse(response: ConsumeResponse): void {
    switch (response.event.case) {
      case 'subscribed':
        this.active = response.event.value.active;
        this.resolveReady();
        for (const wake of this.subscribedWaiters.splice(0)) wake();
        return;
      case 'entry':
        this.deliver(response.event.value);
        for (const entry of response.moreEntries) this.deliver(entry);
        return;
      case 'ackReceipt': {
        const pending = this.pendingAcks.get(response.event.value.requestId);
        this.pendingAcks.delete(response.event.value.requestId);
        pending?.resolve();
        return;
      }
      case 'activeConsumerChange':
        this.active = response.event.value.active;
        return;
      default:
        return;
    }
  }

  private isAcked(message: Message, position: Position): boolean {
    if (this.cumulativeUpTo !== undefined && comparePositions(position, this.cumulativeUpTo) <= 0) return true;
    return this.acked.has(`${positionKey(position.ledgerId, position.entryId)}:${message.messageId.batchIndex}`);
  }

  private deliver(entry: Entry): void {
    const position = { ledgerId: entry.position?.ledgerId ?? -1n, entryId: entry.position?.entryId ?? -1n };
    const batchSize = Math.max(entry.numMessages, entry.messages.length);
    const previous = this.lastPosition;
    this.lastPosition = position;
    let queued = 0;
    for (const message of messagesOfEntry(entry, this.topic, this.partition)) {
      if (this.isAcked(message, position)) continue;
      this.incoming.push({ message, from: this, generation: this.generation, position, batchSize, previous });
      queued++;
    }
    if (batchSize > 1) {
      const present = new Set(
        entry.messages.map((message, index) => (message.batchIndex >= 0 ? message.batchIndex : index)),
      );
      const key = positionKey(position.ledgerId, position.entryId);
      const indexes = this.batchAcks.get(key) ?? new Set<number>();
      for (let index = 0; index < batchSize; index++) if (!present.has(index)) indexes.add(index);
      if (indexes.size > 0) this.batchAcks.set(key, indexes);
    }
    // Permits of messages not handed out (already acknowledged) come back at once.
    if (batchSize - queued > 0) this.grant(batchSize - queued);
  }
}
