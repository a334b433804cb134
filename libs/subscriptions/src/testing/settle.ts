import type { Subscription } from '../subscription.js';
import type { DispatchEntry } from '../types.js';

/** Turns of the event loop settle waits at most: in-memory work finishes in a few. */
const MAX_SETTLE_TURNS = 1_000;

/**
 * Resolves once the subscription's dispatch has nothing it can do: parked
 * for consumers or for entries, twice in a row across a turn of the event
 * loop (so no promise continuation is still on its way). Fails after
 * MAX_SETTLE_TURNS turns rather than hang.
 */
export async function settle<E extends DispatchEntry>(subscription: Subscription<E>): Promise<void> {
  let idleTurns = 0;
  for (let turn = 0; turn < MAX_SETTLE_TURNS; turn++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    idleTurns = subscription.state === 'running' ? 0 : idleTurns + 1;
    if (idleTurns >= 2) return;
  }
  throw new Error(`subscription ${subscription.name} still dispatching after ${MAX_SETTLE_TURNS} turns`);
}
