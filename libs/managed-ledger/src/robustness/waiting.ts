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

/** Resolves once `condition` holds, checking every millisecond (bound it with `within`). */
export async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/**
 * Runs `check` until it finds nothing (at most 100 times, 5 ms apart) and
 * returns its last findings: for work a fenced owner finishes in the background.
 */
export async function eventually(check: () => Promise<string[]>): Promise<string[]> {
  let found = await check();
  for (let i = 0; i < 100 && found.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    found = await check();
  }
  return found;
}
