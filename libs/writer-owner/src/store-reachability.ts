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
 * one read) every interval: when no try got an answer for
 * `storeUnreachableReleaseMs`, the store is unreachable; the first answer
 * after that makes it reachable again. A try is judged by when its answer
 * came, not when it was sent, so a try held up by a cut and answered at the
 * heal counts as the store being back. Only the network or the store being
 * away is judged: the tries read, and a store that answers reads while
 * refusing writes is left to the managed ledger's retries.
 */
export class StoreReachability {
  private lastAnsweredMs: number;
  private triesInFlight = 0;
  private unreachable = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly probe: () => Promise<unknown>,
    private readonly settings: StoreReachabilitySettings,
    private readonly events: StoreReachabilityEvents,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastAnsweredMs = now();
  }

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
    this.lastAnsweredMs = this.now();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One try and one verdict (public for tests that drive it without the timer). */
  tick(): void {
    if (this.triesInFlight < MAX_TRIES_IN_FLIGHT) this.tryStore();
    if (this.unreachable) {
      this.events.stillUnreachable();
      return;
    }
    if (this.now() - this.lastAnsweredMs < this.settings.storeUnreachableReleaseMs) return;
    this.unreachable = true;
    this.events.unreachable();
  }

  private tryStore(): void {
    this.triesInFlight++;
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
    this.lastAnsweredMs = this.now();
    if (!this.unreachable) return;
    this.unreachable = false;
    this.events.reachable();
  }
}
