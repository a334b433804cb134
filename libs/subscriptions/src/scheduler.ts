/** Time for the subscription: injected so that tests drive it by hand. */
export interface Scheduler {
  now(): number;
  /** Runs `fn` after `delayMs`; the returned function cancels it. */
  schedule(fn: () => void, delayMs: number): () => void;
}

/** Real time; timers do not keep the process alive. */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  schedule(fn, delayMs) {
    const timer = setTimeout(fn, delayMs);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
