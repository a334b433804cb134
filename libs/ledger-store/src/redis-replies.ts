// How the Redis ledger store sends many commands at once and reads what Redis answers.
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@ledgerline/storage-kit';
import { storeCorrupt, storeUnavailable } from './errors.js';

/** One reply per command, as a pipeline answers: the error or the value. */
export type Reply = [error: Error | null, value: unknown];

/**
 * Sends one command per ledger in one round trip and answers with each
 * command's reply in order. On one Redis that is a pipeline (one write, one
 * read, however many ledgers). A Cluster pipeline must stay on one node and
 * a batch's ledgers spread over every slot, so there the commands go out
 * together, unpipelined, and each travels to its own node.
 */
export async function eachLedger(
  client: RedisClient,
  ledgerIds: readonly number[],
  queue: (pipeline: ChainableCommander, ledgerId: number) => void,
  single: (ledgerId: number) => Promise<unknown>,
): Promise<Reply[]> {
  // A pipeline of one command only adds its own bookkeeping.
  if (client.isCluster || ledgerIds.length === 1) {
    return Promise.all(
      ledgerIds.map((ledgerId) =>
        single(ledgerId).then(
          (value): Reply => [null, value],
          (error: unknown): Reply => [asError(error), null],
        ),
      ),
    );
  }
  const pipeline = client.pipeline();
  for (const ledgerId of ledgerIds) queue(pipeline, ledgerId);
  const replies = await pipeline.exec();
  if (replies === null || replies.length !== ledgerIds.length) {
    throw storeUnavailable(
      'redis',
      `a pipeline of ${ledgerIds.length} commands got ${replies?.length ?? 'no'} replies`,
    );
  }
  return replies;
}

function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

/** What `run` returns or throws, as a settled result. */
export function settle<T>(run: () => T): PromiseSettledResult<T> {
  try {
    return { status: 'fulfilled', value: run() };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

/** The replies of a MULTI, or the first error among them. */
export function unwrapTransaction(replies: [Error | null, unknown][] | null, expected: number): unknown[] {
  if (replies === null || replies.length !== expected) {
    throw storeUnavailable('redis', 'the transaction was discarded');
  }
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

export function isOvertakenAppend(thrown: unknown): boolean {
  const message = (thrown as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' && /^(ERR )?APPEND_OVERTAKEN\b/.test(message);
}

export function toInteger(reply: unknown): number {
  const value = typeof reply === 'number' ? reply : Number(String(reply));
  if (!Number.isSafeInteger(value)) throw storeCorrupt(`Redis returned ${String(reply)} where an integer belongs`);
  return value;
}
