import { unexpectedRejection } from '@ledgerline/errors';

export interface StoreReachabilitySettings {
  /** No try answered for this long: the store counts as unreachable. 0 never judges it so. */
  storeUnreachableReleaseMs: number;
  /** How often the store is tried; at most half the bound is used, so two tries fit in it. */
  ledgerStoreCheckIntervalMs: number;
}

export interface StoreReachabilityEvents {
  /** The store answered nothing for the bound. */
  unreachable(): void;
  /** Every try while it stays unreachable (topics loaded meanwhile are moved off too). */
  stillUnreachable(): void;
  /** The first answer after it was unreachable. */
  reachable(): void;
}

/**
 * Tries at once at most this many: a cut-off Redis holds each try until its command timeout, and a new try
 * every interval meanwhile would pile up. The verdict does not need them: it goes by the last answer.
 */
const MAX_TRIES_IN_FLIGHT = 8;

/**
 * Whether this owner can use its ledger store, judged by trying it (`probe`,
 * one read) every interval: when the first try sent since the last answer
 * has waited `storeUnreachableReleaseMs` (and a later try went out too), the
 * store is unreachable; the first answer after that makes it reachable
 * again. A try is judged by when its answer came, not when it was sent, so a
 * try held up by a cut and answered at the heal counts as the store being
 * back. Only the network or the store being away is judged: the tries read,
 * and a store that answers reads while refusing writes is left to the
 * managed ledger's retries.
 *
 * A stalled event loop is not a cut: the clock runs while nothing is tried or
 * read. So the wait is counted from a try, never from the last answer (after
 * a stall the next try is new), and the verdict is taken after the loop has
 * read what arrived meanwhile (setImmediate runs after the poll phase): an
 * answer that sat in the socket during the stall still counts.
 */
export class StoreReachability {
  /** When the first try since the last answer went out; undefined while the last try sent was answered. */
  private firstUnansweredSentMs: number | undefined;
  private triesSinceAnswer = 0;
  private triesInFlight = 0;
  private unreachable = false;
  private verdictPending = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly settings: StoreReachabilitySettings,
    private readonly events: StoreReachabilityEvents,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get enabled(): boolean {
    return this.settings.storeUnreachableReleaseMs > 0;
  }

  get intervalMs(): number {
    const bound = this.settings.storeUnreachableReleaseMs;
    return Math.max(10, Math.min(this.settings.ledgerStoreCheckIntervalMs, Math.floor(bound / 2)));
  }

  /** False from the bound without an answer until the next answer. */
  get reachable(): boolean {
    return !this.unreachable;
  }

  start(): void {
    if (!this.enabled || this.timer !== undefined) return;
    this.firstUnansweredSentMs = undefined;
    this.triesSinceAnswer = 0;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One try, and a verdict once the loop has read what arrived (public for tests that drive it without the timer). */
  tick(): void {
    if (this.triesInFlight < MAX_TRIES_IN_FLIGHT) this.tryStore();
    if (this.unreachable) {
      this.events.stillUnreachable();
      return;
    }
    if (!this.waitedTooLong() || this.verdictPending) return;
    this.verdictPending = true;
    setImmediate(() => {
      this.verdictPending = false;
      if (this.unreachable || !this.waitedTooLong()) return;
      this.unreachable = true;
      this.events.unreachable();
    });
  }

  private waitedTooLong(): boolean {
    return (
      this.firstUnansweredSentMs !== undefined &&
      this.triesSinceAnswer >= 2 &&
      this.now() - this.firstUnansweredSentMs >= this.settings.storeUnreachableReleaseMs
    );
  }

  private tryStore(): void {
    this.triesInFlight++;
    this.triesSinceAnswer++;
    this.firstUnansweredSentMs ??= this.now();
    let tried: Promise<unknown>;
    try {
      tried = this.probe();
    } catch (error) {
      tried = Promise.reject(error);
    }
    tried
      .then(
        () => this.answered(),
        () => undefined,
      )
      .finally(() => this.triesInFlight--)
      .catch(unexpectedRejection);
  }

  private answered(): void {
    this.firstUnansweredSentMs = undefined;
    this.triesSinceAnswer = 0;
    if (!this.unreachable) return;
    this.unreachable = false;
    this.events.reachable();
  }
}
