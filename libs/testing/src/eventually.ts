/*
 * The one bounded poller the tests share. A test that waits for something to
 * happen in the background (a reconnect, a sweep, a handler that saw an abort)
 * checks a condition until it holds, and fails naming what it waited for when
 * the bound runs out: a wait, never an assertion on how long something took.
 */

/** How many times `eventually` checks its condition by default. */
export const EVENTUALLY_DEFAULT_ATTEMPTS = 500;
/** The pause between two checks by default, in milliseconds (500 x 20 ms bounds a wait at about 10 s). */
export const EVENTUALLY_DEFAULT_INTERVAL_MS = 20;

export interface EventuallyOptions {
  /** Checks the condition at most this many times. */
  attempts?: number;
  /** Pauses this long between two checks, in milliseconds. */
  intervalMs?: number;
  /** What the test waits for, named in the failure. */
  description?: string;
}

/** Resolves once `condition` holds; rejects after `attempts` checks that found it false. */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  options: EventuallyOptions = {},
): Promise<void> {
  const attempts = options.attempts ?? EVENTUALLY_DEFAULT_ATTEMPTS;
  const intervalMs = options.intervalMs ?? EVENTUALLY_DEFAULT_INTERVAL_MS;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (await condition()) return;
    if (attempt < attempts) await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  const what = options.description ?? 'the condition';
  throw new Error(`${what} did not hold after ${attempts} checks ${intervalMs} ms apart`);
}
