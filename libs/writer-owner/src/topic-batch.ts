import type { PublishMessage } from '@ledgerline/proto';
import type { ProducerFence } from './producer-fence.js';
import type { Receipt } from './receipts.js';

/** An entry's state, as flags: handed to the managed ledger, answered (either, both, or neither: queued). */
const APPENDED = 1;
const ANSWERED = 2;

/**
 * The entries of one publish request for one topic, from the turn the stream
 * read them to their answers: they enter the topic's queue together, in the
 * order read, and keep it through admission (budgets, deduplication) to the
 * managed ledger. Each entry is answered once, with a receipt or why it was
 * not stored; `answered` settles when every entry is. The stream's fence
 * learns of every refusal here, when it is answered, so an entry admitted
 * after it sees it.
 */
export class TopicBatch {
  readonly size: number;
  /** Each entry in the stored layout, once prepared; undefined for one refused before. */
  readonly bytes: Array<Uint8Array | undefined>;
  readonly numMessages: number[];
  readonly receipts: Array<Receipt | undefined>;
  /** Why an entry was not stored (sparse: set for refused entries only). */
  readonly failures: unknown[] = [];
  /** Admission's place in the batch: every entry before it was admitted or refused. */
  next = 0;
  /** The entry at `next` holds its topic budget already: it waited for it alone. */
  headBudgeted = false;
  /** Why appends in doubt could not be checked: named producers' entries of this batch are refused with it. */
  inDoubtFailure: unknown = undefined;
  /** Entries handed to the managed ledger whose appends have not settled yet. */
  inStore = 0;
  /** When a stage trace is on (StageTrace): the request read, first entry appended, last store write settled (ms). */
  readonly times = { readMs: 0, appendedMs: 0, storedMs: 0 };
  readonly answered: Promise<void>;
  private readonly states: Uint8Array;
  private unanswered: number;
  private settle!: () => void;
  /** Duplicates of an entry of this batch still in flight, waiting for its answer (rare). */
  private waiters: Map<number, Array<() => void>> | undefined;

  constructor(
    readonly messages: readonly PublishMessage[],
    readonly fence: ProducerFence,
    readonly signal: AbortSignal | undefined,
  ) {
    this.size = messages.length;
    this.bytes = new Array<Uint8Array | undefined>(this.size);
    this.numMessages = new Array<number>(this.size).fill(1);
    this.receipts = new Array<Receipt | undefined>(this.size);
    this.states = new Uint8Array(this.size);
    this.unanswered = this.size;
    this.answered = new Promise<void>((resolve) => (this.settle = resolve));
    if (this.size === 0) this.settle();
  }

  isAnswered(index: number): boolean {
    return (this.states[index]! & ANSWERED) !== 0;
  }

  /** Handed to the managed ledger (answered or not since). */
  wasAppended(index: number): boolean {
    return (this.states[index]! & APPENDED) !== 0;
  }

  markAppended(index: number): void {
    this.states[index] = this.states[index]! | APPENDED;
  }

  /** Still waiting for its append: handed to the ledger and not answered. */
  isOwed(index: number): boolean {
    return this.states[index] === APPENDED;
  }

  /** The highest sequence id entry `index` takes (a batched entry takes one per message). */
  highest(index: number): bigint {
    const sequenceId = this.messages[index]!.sequenceId;
    const numMessages = this.numMessages[index]!;
    // Most entries hold one message: no bigint made for them.
    return numMessages === 1 ? sequenceId : sequenceId + BigInt(numMessages - 1);
  }

  answer(index: number, receipt: Receipt): void {
    if (this.isAnswered(index)) return;
    this.receipts[index] = receipt;
    this.answered_(index);
  }

  /** Answers entry `index` with a failure, and tells the stream's fence first (its producer may resend it). */
  refuse(index: number, thrown: unknown): void {
    if (this.isAnswered(index)) return;
    this.fence.refused(this.messages[index], thrown);
    this.failures[index] = thrown;
    this.answered_(index);
  }

  /** Refuses every entry not answered yet, in order: after the first of a producer, its later ones would overtake it. */
  refuseRest(thrown: unknown): void {
    for (let index = this.next; index < this.size; index++) {
      if (this.states[index] !== 0) continue;
      this.refuse(index, this.fence.overtaking(this.messages[index]!) ?? thrown);
    }
    this.next = this.size;
  }

  /** Runs `then` once entry `index` is answered (at once when it is). */
  whenAnswered(index: number, then: () => void): void {
    if (this.isAnswered(index)) {
      then();
      return;
    }
    this.waiters ??= new Map();
    const waiting = this.waiters.get(index);
    if (waiting === undefined) this.waiters.set(index, [then]);
    else waiting.push(then);
  }

  private answered_(index: number): void {
    this.states[index] = this.states[index]! | ANSWERED;
    const waiting = this.waiters?.get(index);
    if (waiting !== undefined) {
      this.waiters!.delete(index);
      for (const then of waiting) then();
    }
    if (--this.unanswered === 0) this.settle();
  }
}
