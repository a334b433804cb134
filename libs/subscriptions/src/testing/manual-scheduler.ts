import type { Scheduler } from '../scheduler.js';

interface Timer {
  dueMs: number;
  seq: number;
  fn: () => void;
}

/** A scheduler whose time moves only when a test calls advance. */
export class ManualScheduler implements Scheduler {
  private nowMs: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(startMs = 1_000_000) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  schedule(fn: () => void, delayMs: number): () => void {
    const timer: Timer = { dueMs: this.nowMs + Math.max(0, delayMs), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due, in order of due time. */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.dueMs <= target).sort((a, b) => a.dueMs - b.dueMs || a.seq - b.seq)[0];
      if (next === undefined) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.nowMs = next.dueMs;
      next.fn();
    }
    this.nowMs = target;
  }
}
