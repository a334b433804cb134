import { eventually } from '@ledgerline/testing';

/** Waiting with bounds: every wait a history does ends, so a hang shows as a failure naming what hung. */

/** Fails with a message naming `what` when `promise` does not settle within `ms`: a hang is a bug too. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `check` until it finds nothing (at most 100 times, 5 ms apart) and
 * returns its last findings: for work a fenced owner finishes in the
 * background. The findings, not a timeout, are what the test then asserts on.
 */
export async function untilNoFindings(check: () => Promise<string[]>): Promise<string[]> {
  let found: string[] = [];
  await eventually(async () => (found = await check()).length === 0, { attempts: 101, intervalMs: 5 }).catch(
    // Running out of attempts is reported through the findings returned.
    () => undefined,
  );
  return found;
}
