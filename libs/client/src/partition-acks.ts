import { LedgerlineError } from '@ledgerline/errors';
import type { AckSchema } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { AckMemory, messageKey, type Position } from './ack-memory.js';
import { AckWaiters } from './ack-waiters.js';
import { ClientReason } from './client-reason.js';
import { positionKey } from './message.js';

export { MAX_REMEMBERED_ACKS, type Position } from './ack-memory.js';

type AckInit = MessageInitShape<typeof AckSchema>;

/**
 * Acks per partition that may resolve before the owner confirmed them (the
 * default mode). Past it, an ack waits for its receipt as with ackReceipts,
 * so the acks the client must remember and resend stay bounded when the
 * owner stops confirming.
 */
export const MAX_UNCONFIRMED_ACKS = 10_000;
/**
 * Individual acks made within this long go to the owner as one Ack command
 * with one receipt (Pulsar's clients group acks too): an owner persists the
 * cursor before each receipt, so one command per message would cap
 * consumption at the owner's cursor-write rate.
 */
export const ACK_GROUP_TIME_MS = 10;
/** Most positions in one grouped Ack command; a full group goes at once. */
export const MAX_ACK_GROUP_SIZE = 1_000;

interface BatchIndexAck {
  position: Position;
  ackedIndexes: number[];
  batchSize: number;
}

/** Acks on their way to the owner: a group still filling, or a command sent and not yet confirmed. */
interface Outgoing {
  /** The messages it acknowledges, as remembered; its receipt moves them to the confirmed acks. */
  readonly keys: string[];
  /** The ack promises that wait for its receipt (ackReceipts, or past MAX_UNCONFIRMED_ACKS). */
  readonly waiters: AckWaiters;
}

interface AckGroup extends Outgoing {
  readonly positions: Map<string, Position>;
  /** The acked indexes of batch entries, copied when the group is sent (acks to come add to them). */
  readonly batchIndexAcks: Map<string, { position: Position; indexes: ReadonlySet<number>; batchSize: number }>;
  readonly timer: NodeJS.Timeout;
}

interface AckCommand extends Outgoing {
  readonly ack: AckInit;
}

/** A flushAcks() call: the commands it waits for. */
interface FlushWaiter {
  readonly outstanding: Set<bigint>;
  readonly waiters: AckWaiters;
}

export interface PartitionAcksOptions {
  /** The topic (or partition), for errors. */
  readonly topic: string;
  /** ackReceipts: every ack promise waits for the owner's receipt. */
  readonly receipts: boolean;
  /** The longest an ack promise or flushAcks() waits for receipts (the operation timeout). */
  readonly timeoutMs: number;
  /** Sends an Ack command on the current stream, if there is one. */
  readonly send: (ack: AckInit) => void;
  /** Why the consumer no longer takes acks; undefined while it does. */
  readonly closedError: () => LedgerlineError | undefined;
}

/**
 * The acknowledgements of one partition consumer. An ack is remembered
 * (AckMemory) and added to the current group at once; by default its promise
 * resolves then. The group goes to the owner as one command with a request
 * id; the command is sent again on every new stream until the owner's
 * receipt says it persisted it. With ackReceipts an ack's promise waits for
 * that receipt. Every promise settles within the operation timeout.
 */
export class PartitionAcks {
  private nextRequestId = 1n;
  private readonly inFlight = new Map<bigint, AckCommand>();
  private group: AckGroup | undefined;
  private readonly memory = new AckMemory();
  private readonly flushWaiters = new Set<FlushWaiter>();
  private stopped: LedgerlineError | undefined;
  private closing: LedgerlineError | undefined;

  constructor(private readonly options: PartitionAcksOptions) {}

  /** Acknowledges one message: resolves once queued (or, when it waits, once the owner confirms). */
  ack(position: Position, batchIndex: number, batchSize: number): Promise<void> {
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    const waits = this.waitsForReceipt();
    const key = messageKey(position, batchIndex);
    this.memory.remember(key);
    const group = this.currentGroup();
    group.keys.push(key);
    const entry = positionKey(position.ledgerId, position.entryId);
    const indexes = batchSize <= 1 ? undefined : this.memory.ackBatchIndex(position, batchIndex, batchSize);
    if (indexes === undefined) {
      group.batchIndexAcks.delete(entry);
      group.positions.set(entry, position);
    } else group.batchIndexAcks.set(entry, { position, indexes, batchSize });
    const done = waits ? group.waiters.wait() : Promise.resolve();
    if (group.positions.size + group.batchIndexAcks.size >= MAX_ACK_GROUP_SIZE) this.flush();
    return done;
  }

  /** Acknowledges this message and everything before it; `previous` is the entry delivered before this one. */
  ackCumulative(
    position: Position,
    batchIndex: number,
    batchSize: number,
    previous: Position | undefined,
  ): Promise<void> {
    const refused = this.refusal();
    if (refused !== undefined) return Promise.reject(refused);
    const waits = this.waitsForReceipt();
    // A cumulative ack goes after the individual ones made before it.
    this.flush();
    let command: AckCommand;
    if (batchSize <= 1 || batchIndex >= batchSize - 1) {
      this.memory.rememberCumulative(position);
      command = this.send({ cumulative: position }, [], waits);
    } else {
      // Inside a batch: everything before this entry, plus this entry's indexes up to this one.
      const ackedIndexes = Array.from({ length: batchIndex + 1 }, (_, at) => at);
      const keys = ackedIndexes.map((at) => messageKey(position, at));
      for (const key of keys) this.memory.remember(key);
      if (previous !== undefined) this.memory.rememberCumulative(previous);
      command = this.send(
        {
          ...(previous === undefined ? {} : { cumulative: previous }),
          batchIndexAcks: [{ position, ackedIndexes, batchSize }],
        },
        keys,
        waits,
      );
    }
    return waits ? command.waiters.wait() : Promise.resolve();
  }

  /** Whether this message was acknowledged here already (a redelivery of it is dropped). */
  isAcked(position: Position, batchIndex: number): boolean {
    return this.memory.isAcked(position, batchIndex);
  }

  /** A batch entry delivered with only `present` of its indexes: the owner has the others acknowledged. */
  batchDelivered(position: Position, batchSize: number, present: ReadonlySet<number>): void {
    this.memory.batchDelivered(position, batchSize, present);
  }

  /** After a seek: the application asked to see acknowledged messages again. */
  forget(): void {
    this.memory.forget();
  }

  /** Acks sent and not yet confirmed, to send again on a new stream. */
  unconfirmed(): AckInit[] {
    return [...this.inFlight.values()].map((command) => command.ack);
  }

  /** The owner persisted the ack of `requestId`. */
  receipt(requestId: bigint): void {
    const command = this.inFlight.get(requestId);
    // A second receipt for a command sent on two streams finds nothing left to do.
    if (command === undefined) return;
    this.inFlight.delete(requestId);
    this.memory.confirm(command.keys);
    command.waiters.resolve();
    for (const flush of this.flushWaiters) {
      flush.outstanding.delete(requestId);
      if (flush.outstanding.size === 0) flush.waiters.resolve();
    }
  }

  /** Sends the current group of acks now, as one command; `urgent` asks the owner to persist it at once. */
  flush(urgent = false): void {
    const group = this.group;
    if (group === undefined) return;
    this.group = undefined;
    clearTimeout(group.timer);
    const batchIndexAcks: BatchIndexAck[] = [...group.batchIndexAcks.values()].map(
      ({ position, indexes, batchSize }) => ({ position, ackedIndexes: [...indexes], batchSize }),
    );
    const ack = { positions: [...group.positions.values()], batchIndexAcks };
    this.send(ack, group.keys, urgent || group.waiters.size > 0, group.waiters);
  }

  /**
   * Sends the grouped acks now and resolves once the owner confirmed every
   * ack made so far; rejects with ACK_NOT_CONFIRMED after the operation
   * timeout, or with why the acks stopped (stop()).
   */
  flushAcks(): Promise<void> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    const sentBefore = this.inFlight.size;
    this.flush(true);
    if (this.inFlight.size === 0) return Promise.resolve();
    // No group went now, and what is out may wait for the owner's next snapshot: an empty command asks for a write
    // now, which holds every ack the owner took before it, so their receipts come with it.
    const deferred = [...this.inFlight.values()].some((command) => command.ack.receiptWithNextSnapshot === true);
    if (this.inFlight.size === sentBefore && deferred) this.send({}, [], true);
    const flush: FlushWaiter = { outstanding: new Set(this.inFlight.keys()), waiters: this.newWaiters() };
    this.flushWaiters.add(flush);
    const done = flush.waiters.wait();
    const forget = (): void => void this.flushWaiters.delete(flush);
    done.then(forget, forget);
    return done;
  }

  /**
   * The consumer started closing: a promise whose deadline passes from now on
   * rejects with `error` (CONSUMER_CLOSED) rather than ACK_NOT_CONFIRMED,
   * since its ack is not sent again after the close.
   */
  closeStarted(error: LedgerlineError): void {
    this.closing = error;
  }

  /**
   * Settles everything still waiting with `error`: grouped acks, commands in
   * flight and flushAcks() calls. The consumer is closing or its stream
   * failed for good; later acks are refused with `error`.
   */
  stop(error: LedgerlineError): void {
    this.stopped ??= error;
    const group = this.group;
    this.group = undefined;
    if (group !== undefined) {
      clearTimeout(group.timer);
      group.waiters.reject(error);
    }
    for (const command of this.inFlight.values()) command.waiters.reject(error);
    this.inFlight.clear();
    for (const flush of this.flushWaiters) flush.waiters.reject(error);
    this.flushWaiters.clear();
  }

  private refusal(): LedgerlineError | undefined {
    return this.stopped ?? this.options.closedError();
  }

  private waitsForReceipt(): boolean {
    return this.options.receipts || this.memory.unconfirmedCount >= MAX_UNCONFIRMED_ACKS;
  }

  private currentGroup(): AckGroup {
    return (this.group ??= {
      positions: new Map(),
      batchIndexAcks: new Map(),
      keys: [],
      waiters: this.newWaiters(),
      timer: setTimeout(() => this.flush(), ACK_GROUP_TIME_MS),
    });
  }

  /**
   * Sends one Ack command. Unless someone waits on its receipt (`urgent`,
   * or ackReceipts), the owner may answer it with the cursor's next
   * scheduled snapshot instead of a write of its own: the receipt only
   * frees this ack from being sent again, and one cursor write per interval
   * costs the owner far less than one per command.
   */
  private send(ack: AckInit, keys: string[], urgent: boolean, waiters = this.newWaiters()): AckCommand {
    const requestId = this.nextRequestId++;
    const receiptWithNextSnapshot = !urgent && !this.options.receipts;
    const command: AckCommand = { ack: { ...ack, requestId, receiptWithNextSnapshot }, keys, waiters };
    this.inFlight.set(requestId, command);
    this.options.send(command.ack);
    return command;
  }

  private newWaiters(): AckWaiters {
    const { topic, timeoutMs } = this.options;
    return new AckWaiters(
      timeoutMs,
      () =>
        this.closing ??
        new LedgerlineError(
          'DEADLINE_EXCEEDED',
          ClientReason.ACK_NOT_CONFIRMED,
          `the owner of ${topic} did not confirm the acknowledgement within ${timeoutMs} ms; ` +
            'it stays queued and is sent again after a reconnect',
          { details: { topic } },
        ),
    );
  }
}
