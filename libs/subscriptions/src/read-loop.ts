import { LedgerlineError } from '@ledgerline/errors';
import { SubscriptionReason } from './errors.js';
import { MAX_EMPTY_WAKEUPS, READ_RETRY_BASE_DELAY_MS, READ_RETRY_MAX_DELAY_MS } from './limits.js';
import type { ReplayItem } from './replay-queue.js';
import type { Scheduler } from './scheduler.js';
import type { DispatchEntry, DispatchState, SubscriptionSource } from './types.js';

/** Where the read loop hands what it read (the subscription's entry dispatch). */
export interface ReadTarget<E extends DispatchEntry> {
  /** Replay positions some consumer can take now. */
  pickReplay(): ReplayItem[];
  /** Delivers what it can of `items`; says how many left the replay queue and how many were not read. */
  dispatchReplayed(items: readonly ReplayItem[], entries: readonly E[]): { done: number; unread: number };
  /** How many new entries to read: 0 when nobody can take one. */
  readCapacity(): number;
  dispatchNew(entries: readonly E[]): void;
  /** Whether only new entries could give dispatch work: nothing waits for replay, and a consumer is there. */
  waitsForNewEntriesOnly(): boolean;
}

/**
 * The subscription's one reader of its source, started on construction: it
 * reads what the consumers have permits for (positions to replay first) and
 * hands it on, or else parks until woken or waits for the source to have
 * entries. Failed reads are retried with backoff; two source calls are never
 * in flight at once.
 */
export class ReadLoop<E extends DispatchEntry> {
  private dispatchState: DispatchState = 'running';
  private stopped = false;
  /** Bumped by seek and close: a read that began before is stale. */
  private readEpoch = 0;
  private seeking = 0;
  private wakeRequested = false;
  private parked: (() => void) | undefined;
  private entriesWait: AbortController | undefined;
  private inFlight: Promise<unknown> | undefined;
  private readFailures = 0;
  /** Wake-ups from the source (not aborts) since the last read that found entries. */
  private emptyWakeups = 0;
  private stopRetryWait: (() => void) | undefined;
  /** Resolves once the loop has stopped and no source call is in flight. */
  readonly finished: Promise<void>;

  constructor(
    /** The subscription's name, for errors. */
    private readonly name: string,
    private readonly source: SubscriptionSource<E>,
    private readonly scheduler: Scheduler,
    private readonly target: ReadTarget<E>,
    /** Every failed read, and a source that keeps waking the loop for nothing. */
    private readonly onError: (error: LedgerlineError) => void,
    /** A read failed for good: the subscription closes with the error. */
    private readonly onFatal: (error: LedgerlineError) => void,
  ) {
    this.finished = this.run();
  }

  get state(): DispatchState {
    return this.dispatchState;
  }

  get closed(): boolean {
    return this.stopped;
  }

  get epoch(): number {
    return this.readEpoch;
  }

  /** Ends the loop (the subscription closed): a read in flight is stale and nothing more is read. */
  stop(): void {
    this.stopped = true;
    this.stopRetryWait?.();
    this.readEpoch++;
    this.dispatchState = 'closed';
  }

  /** A seek begins: reads in flight are stale and none begins until endSeek. */
  beginSeek(): void {
    this.seeking++;
    this.readEpoch++;
    this.wake();
  }

  /** Settles when the source call in flight (if any) has returned, whether or not it failed. */
  readInFlight(): Promise<unknown> | undefined {
    return this.inFlight?.catch(() => undefined);
  }

  endSeek(): void {
    this.seeking--;
    this.wake();
  }

  /** Something changed that may let dispatch do more. */
  wake(): void {
    this.wakeRequested = true;
    const parked = this.parked;
    this.parked = undefined;
    parked?.();
    // Waiting for new entries only needs interrupting for work that is not new entries, or when
    // nobody is left to take them: an idle subscription then parks instead of holding a read waiter
    // on the source (the managed ledger's) until the topic unloads.
    if (!this.target.waitsForNewEntriesOnly() || this.seeking > 0 || this.stopped) this.entriesWait?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.step();
        this.readFailures = 0;
      } catch (err) {
        await this.onReadFailure(LedgerlineError.from(err));
      }
    }
    this.dispatchState = 'closed';
  }

  private async step(): Promise<void> {
    this.wakeRequested = false;
    if (this.seeking > 0) return this.park('waiting-for-consumers');
    const epoch = this.readEpoch;
    const replayBatch = this.target.pickReplay();
    if (replayBatch.length > 0) {
      this.dispatchState = 'running';
      const entries = await this.track(this.source.readPositions(replayBatch.map((item) => item.position)));
      if (epoch !== this.readEpoch) return;
      const { done, unread } = this.target.dispatchReplayed(replayBatch, entries);
      if (unread > 0) {
        // Retried like a failed read: the entries stay where they are in the replay order.
        throw new LedgerlineError(
          'UNAVAILABLE',
          SubscriptionReason.ENTRIES_NOT_READ,
          `${unread} unacknowledged entries of subscription ${this.name} could not be read again`,
        );
      }
      // Nothing delivered means nobody could take these after all: wait for a change rather than spin.
      if (done === 0) return this.park('waiting-for-consumers');
      return;
    }
    const capacity = this.target.readCapacity();
    if (capacity === 0) return this.park('waiting-for-consumers');
    this.dispatchState = 'running';
    const entries = await this.track(this.source.readEntries(capacity));
    // After a seek these came from the old read position: the source reads them again if they still count.
    if (epoch !== this.readEpoch) return;
    if (entries.length > 0) {
      this.emptyWakeups = 0;
      this.target.dispatchNew(entries);
      return;
    }
    if (this.emptyWakeups < MAX_EMPTY_WAKEUPS) return this.waitForEntries();
    // A source that keeps saying entries are there and then returns none would spin this loop: slow it down, and say so.
    this.emptyWakeups = 0;
    this.onError(
      new LedgerlineError(
        'INTERNAL',
        SubscriptionReason.SOURCE_WAKES_WITHOUT_ENTRIES,
        `the source of subscription ${this.name} woke its reader ${MAX_EMPTY_WAKEUPS} times with nothing to read`,
      ),
    );
    await this.pause(READ_RETRY_BASE_DELAY_MS);
  }

  private track<T>(read: Promise<T>): Promise<T> {
    this.inFlight = read;
    return read.finally(() => {
      if (this.inFlight === read) this.inFlight = undefined;
    });
  }

  private park(state: DispatchState): Promise<void> {
    if (this.wakeRequested || this.stopped) return Promise.resolve();
    this.dispatchState = state;
    return new Promise<void>((resolve) => (this.parked = resolve));
  }

  private async waitForEntries(): Promise<void> {
    if (this.wakeRequested || this.stopped) return;
    this.dispatchState = 'waiting-for-entries';
    const abort = new AbortController();
    this.entriesWait = abort;
    try {
      await this.track(this.source.waitForEntries(abort.signal));
      if (!abort.signal.aborted) this.emptyWakeups++;
    } finally {
      this.entriesWait = undefined;
    }
  }

  private async onReadFailure(error: LedgerlineError): Promise<void> {
    this.onError(error);
    if (!error.retryable) {
      this.onFatal(error);
      return;
    }
    const delayMs = Math.min(READ_RETRY_MAX_DELAY_MS, READ_RETRY_BASE_DELAY_MS * 2 ** this.readFailures);
    this.readFailures++;
    // Timers come from the injected scheduler (tests drive time), hence no backoff library here.
    await this.pause(delayMs);
  }

  /** Waits `delayMs` before reading again (cut short by close). */
  private async pause(delayMs: number): Promise<void> {
    this.dispatchState = 'retrying';
    await new Promise<void>((resolve) => {
      const cancel = this.scheduler.schedule(resolve, delayMs);
      this.stopRetryWait = () => {
        cancel();
        resolve();
      };
    });
    this.stopRetryWait = undefined;
  }
}
