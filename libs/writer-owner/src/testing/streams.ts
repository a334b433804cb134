/** The items as a request stream, for a handler that reads an AsyncIterable. */
export async function* requestsOf<T>(items: readonly T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

/** Every response of a stream, once it ends. */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const response of stream) out.push(response);
  return out;
}
