/**
 * Runs `work` on every item, at most `concurrency` at once (at least one), in
 * the items' order; resolves once all are done. Moving topics off an owner
 * (a drain, a store it cannot reach) goes through it, so neither opens a
 * transfer per topic at once.
 */
export async function eachAtMost<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker));
}
