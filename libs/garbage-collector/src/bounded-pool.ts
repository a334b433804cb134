/**
 * Runs `run` on each item of `items`, at most `concurrency` at once, taking
 * the next item only when a worker is free, so an async source (a listing
 * read page by page) is read no faster than its items are worked through.
 * The first failure, of `run` or of the source, stops the taking of new
 * items; it is thrown once the items in flight have settled, so no work of
 * the call outlives it.
 */
export async function forEachBounded<T>(
  items: Iterable<T> | AsyncIterable<T>,
  concurrency: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new Error(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : toAsync(items[Symbol.iterator]());
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined) {
      try {
        // An async generator queues overlapping next() calls, so the workers share one source safely.
        const next = await iterator.next();
        // Another worker may have failed while this one waited for the source: take nothing more.
        if (next.done === true || failure !== undefined) return;
        await run(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (failure !== undefined) {
    await iterator.return?.();
    throw failure.error;
  }
}

function toAsync<T>(iterator: Iterator<T>): AsyncIterator<T> {
  return { next: async () => iterator.next() };
}
