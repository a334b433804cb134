/** Longest a test waits for a condition before failing. */
export const WAIT_FOR_TIMEOUT_MS = 10_000;

/** Polls `condition` until it holds; fails with `what` after WAIT_FOR_TIMEOUT_MS. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = WAIT_FOR_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
