/** How long data-path work may run before it lets timers (keep-alives, lease renewals) have a turn. */
export const TURN_BUDGET_MS = 4;

let sliceStartMs: number | undefined;

/**
 * True once the work of this stretch of the event loop has run past
 * TURN_BUDGET_MS: the caller then waits for `nextTurn()` before taking more.
 * A stretch starts with the first call after the previous one ended (an
 * immediate marks the end of each). `now` is for specs: the clock in ms.
 */
export function overTurnBudget(now: number = performance.now()): boolean {
  if (sliceStartMs === undefined) {
    sliceStartMs = now;
    setImmediate(() => (sliceStartMs = undefined));
    return false;
  }
  return now - sliceStartMs > TURN_BUDGET_MS;
}

export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
