/** Resolves after `ms` milliseconds (a back-off pause, never a wait for a condition). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
