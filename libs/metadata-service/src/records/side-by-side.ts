/**
 * Waits for every step, then fails with the first failure in the order the
 * steps are given, not the first to fail in time: reads that ran one after
 * another can run side by side (one round trip to the store, where the client
 * pipelines them) without changing which error a caller sees.
 */
export async function sideBySide<T extends readonly unknown[]>(
  ...steps: { readonly [K in keyof T]: Promise<T[K]> }
): Promise<T> {
  const settled = await Promise.allSettled(steps);
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * The value read beside other checks for a compare-and-set's first attempt,
 * then a fresh read for each retry (a retry follows a conflict: the first
 * value is stale by then).
 */
export function firstThenFresh<T>(first: T, fresh: () => Promise<T>): () => Promise<T> {
  let unused = true;
  return () => {
    if (!unused) return fresh();
    unused = false;
    return Promise.resolve(first);
  };
}
