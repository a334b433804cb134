import { LedgerlineError } from '@ledgerline/errors';
import type { AckSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { ClientReason } from './client-reason.js';
import { comparePositions, positionKey } from './message.js';

type AckInit = MessageInitShape<typeof AckSchema>;

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

/** An entry position. */
export interface Position {
  readonly ledgerId: bigint;
  readonly entryId: bigint;
}

interface BatchIndexAck {
  position: Position;
  ackedIndexes: number[];
  batchSize: number;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

interface PendingAck extends Waiter {
  readonly ack: AckInit;
}

/** Individual acks waiting to go out as one command. */
interface AckGroup {
  positions: Map<string, Position>;
  batchIndexAcks: Map<string, BatchIndexAck>;
  waiters: Waiter[];
  timer: NodeJS.Timeout;
}

/**
 * The acknowledgements of one partition consumer: individual acks grouped
 * into one command, acks sent and waiting for their receipt (sent again on
 * every new stream until one comes), and what was acknowledged, so that a
 * redelivery of it is not handed out again.
 */
export class PartitionAcks {
  private nextRequestId = 1n;
  private readonly pending = new Map<bigint, PendingAck>();
  private group: AckGroup | undefined;
  /** Indexes acknowledged so far of each batch entry not yet wholly acknowledged. */
  private readonly batchAcks = new Map<string, Set<number>>();
  private readonly acked = new Map<string, true>();
  private cumulativeUpTo: Position | undefined;

  constructor(
    /** The topic (or partition), for errors. */
    private readonly topic: string,
    /** Sends an Ack command on the current stream, if there is one. */
    private readonly send: (ack: AckInit) => void,
    /** Why the consumer no longer takes acks; undefined while it does. */
    private readonly closedError: () => LedgerlineError | undefined,
  ) {}

  /** Acknowledges one message; resolves once the owner confirms. */
  ack(position: Position, batchIndex: number, batchSize: number): Promise<void> {
    this.remember(`${positionKey(position.ledgerId, position.entryId)}:${batchIndex}`);
    if (batchSize <= 1) return this.groupAck(position, undefined);
    const key = positionKey(position.ledgerId, position.entryId);
    const indexes = this.batchAcks.get(key) ?? new Set<number>();
    indexes.add(batchIndex);
    if (indexes.size >= batchSize) {
      this.batchAcks.delete(key);
      return this.groupAck(position, undefined);
    }
    this.batchAcks.set(key, indexes);
    return this.groupAck(position, { position, ackedIndexes: [...indexes], batchSize });
  }

  /** Acknowledges this message and everything before it; `previous` is the entry delivered before this one. */
  ackCumulative(
    position: Position,
    batchIndex: number,
    batchSize: number,
    previous: Position | undefined,
  ): Promise<void> {
    if (batchSize <= 1 || batchIndex >= batchSize - 1) {
      this.cumulativeUpTo = position;
      return this.sendAck({ cumulative: position });
    }
    // Inside a batch: everything before this entry, plus this entry's indexes up to this one.
    const ackedIndexes = Array.from({ length: batchIndex + 1 }, (_, at) => at);
    for (const at of ackedIndexes) this.remember(`${positionKey(position.ledgerId, position.entryId)}:${at}`);
    if (previous !== undefined) this.cumulativeUpTo = previous;
    return this.sendAck({
      ...(previous === undefined ? {} : { cumulative: previous }),
      batchIndexAcks: [{ position, ackedIndexes, batchSize }],
    });
  }

  /** Whether this message was acknowledged here already (a redelivery of it is dropped). */
  isAcked(position: Position, batchIndex: number): boolean {
    if (this.cumulativeUpTo !== undefined && comparePositions(position, this.cumulativeUpTo) <= 0) return true;
    return this.acked.has(`${positionKey(position.ledgerId, position.entryId)}:${batchIndex}`);
  }

  /** A batch entry delivered with only `present` of its indexes: the owner has the others acknowledged. */
  batchDelivered(position: Position, batchSize: number, present: ReadonlySet<number>): void {
    const key = positionKey(position.ledgerId, position.entryId);
    const indexes = this.batchAcks.get(key) ?? new Set<number>();
    for (let index = 0; index < batchSize; index++) if (!present.has(index)) indexes.add(index);
    if (indexes.size > 0) this.batchAcks.set(key, indexes);
  }

  /** After a seek: the application asked to see acknowledged messages again. */
  forget(): void {
    this.acked.clear();
    this.batchAcks.clear();
    this.cumulativeUpTo = undefined;
  }

  /** Acks sent and not yet confirmed, to send again on a new stream. */
  unconfirmed(): AckInit[] {
    return [...this.pending.values()].map((pending) => pending.ack);
  }

  /** The owner confirmed the ack of `requestId`. */
  receipt(requestId: bigint): void {
    const pending = this.pending.get(requestId);
    this.pending.delete(requestId);
    pending?.resolve();
  }

  /** Sends the current group of acks as one command (`closing`: as the consumer closes, which still sends it). */
  flush(closing = false): void {
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

  /** Resolves once the owner confirmed (or something failed) every ack in flight, or after `timeoutMs`. */
  async settled(timeoutMs: number): Promise<void> {
    const confirmed = [...this.pending.values()].map(
      (pending) =>
        new Promise<void>((resolve) => {
          const { resolve: settle, reject: fail } = pending;
          pending.resolve = () => (settle(), resolve());
          pending.reject = (error) => (fail(error), resolve());
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(confirmed), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Fails the acks in flight with `error` (the stream failed for good); grouped acks stay. */
  failInFlight(error: LedgerlineError): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  /** Fails every ack the owner has not confirmed (grouped or in flight): the consumer is gone. */
  failUnconfirmed(): void {
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
    this.failInFlight(error);
  }

  /** Adds an individual ack to the current group (a whole entry, or a batch's acked indexes so far). */
  private groupAck(position: Position, batchIndexAck: BatchIndexAck | undefined): Promise<void> {
    const closed = this.closedError();
    if (closed !== undefined) return Promise.reject(closed);
    const group = (this.group ??= {
      positions: new Map(),
      batchIndexAcks: new Map(),
      waiters: [] as Waiter[],
      timer: setTimeout(() => this.flush(), ACK_GROUP_TIME_MS),
    });
    const key = positionKey(position.ledgerId, position.entryId);
    if (batchIndexAck === undefined) {
      group.batchIndexAcks.delete(key);
      group.positions.set(key, position);
    } else group.batchIndexAcks.set(key, batchIndexAck);
    const done = new Promise<void>((resolve, reject) => group.waiters.push({ resolve, reject }));
    if (group.positions.size + group.batchIndexAcks.size >= MAX_ACK_GROUP_SIZE) this.flush();
    return done;
  }

  private sendAck(ack: AckInit, closing = false): Promise<void> {
    const closed = this.closedError();
    if (closed !== undefined && !closing) return Promise.reject(closed);
    // A cumulative ack goes after the individual ones made before it.
    if (ack.cumulative !== undefined) this.flush();
    const requestId = this.nextRequestId++;
    const withId = { ...ack, requestId };
    return new Promise<void>((resolve, reject) => {
      this.pending.set(requestId, { ack: withId, resolve, reject });
      this.send(withId);
    });
  }

  private remember(key: string): void {
    this.acked.set(key, true);
    if (this.acked.size > MAX_REMEMBERED_ACKS) this.acked.delete(this.acked.keys().next().value as string);
  }
}
