import type { AsyncQueue } from './async-queue.js';

/** What a consumer or a reader keeps per partition of its topic. */
export interface PartitionWorker {
  close(): Promise<void>;
  abandon(): void;
}

/**
 * Ends delivery to the application: iteration ends, what was queued and not
 * handed out is dropped, and every partition closes (waiting for its calls in
 * flight within the operation timeout).
 */
export async function closePartitions<T>(
  incoming: AsyncQueue<T>,
  partitions: readonly PartitionWorker[],
): Promise<void> {
  incoming.end();
  incoming.remove(() => true);
  await Promise.all(partitions.map((partition) => partition.close()));
}

/** Ends delivery at once, without waiting for anything: the client is closing under it. */
export function abandonPartitions<T>(incoming: AsyncQueue<T>, partitions: readonly PartitionWorker[]): void {
  incoming.end();
  for (const partition of partitions) partition.abandon();
}
