import { readFileSync } from 'node:fs';
import type { AdminService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';
import { usageError, CliReason } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';

export interface BulkCreateOptions {
  /** Topics per CreateTopics call (the service takes at most 10,000). */
  batchSize: number;
  /** CreateTopics calls in flight at once. */
  concurrency: number;
}

export interface BulkCreateSummary {
  created: number;
  existed: number;
  /** Failures other than "already exists", by reason. */
  failed: Map<string, number>;
  firstFailure?: string;
}

/** The names `create-many` makes: `<namespace>/<prefix><n>` for n in [start, start+count), zero-padded to sort. */
export function generatedNames(namespace: string, prefix: string, start: number, count: number): string[] {
  const width = String(start + count - 1).length;
  return Array.from(
    { length: count },
    (_, index) => `${namespace}/${prefix}${String(start + index).padStart(width, '0')}`,
  );
}

/** Names from a file, one per line (`#` starts a comment); a bare local name goes into `namespace`. */
export function namesFromFile(path: string, namespace: string): string[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw usageError(CliReason.FILE_UNREADABLE, `cannot read --from-file ${path}: ${why}`);
  }
  return text
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter((line) => line.length > 0)
    .map((line) => (line.includes('/') ? line : `${namespace}/${line}`));
}

/**
 * Creates topics in batches with a bounded number of calls in flight, showing
 * progress. Each topic succeeds or fails on its own; a failed call counts its
 * whole batch as failed with the call's reason, except UNAVAILABLE (the
 * service is unreachable), which ends the run with that error.
 */
export async function createInBatches(
  io: CliIo,
  admin: Client<typeof AdminService>,
  names: readonly string[],
  options: BulkCreateOptions,
): Promise<BulkCreateSummary> {
  const summary: BulkCreateSummary = { created: 0, existed: 0, failed: new Map() };
  const batches: string[][] = [];
  for (let start = 0; start < names.length; start += options.batchSize)
    batches.push(names.slice(start, start + options.batchSize));
  const progress = io.progress(names.length, 'creating topics');
  const fail = (reason: string, count: number, message: string) => {
    summary.failed.set(reason, (summary.failed.get(reason) ?? 0) + count);
    summary.firstFailure ??= message;
  };
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++]!;
      try {
        const { results } = await admin.createTopics({ topics: batch });
        for (const result of results) {
          if (result.created) summary.created++;
          else if (result.errorReason === 'TOPIC_EXISTS') summary.existed++;
          else fail(result.errorReason, 1, `${result.topic}: ${result.errorReason}: ${result.errorMessage}`);
        }
      } catch (error) {
        // Without the service there is nothing to count: stop and report it once.
        if ((error as { code?: string }).code === 'UNAVAILABLE') throw error;
        const reason = (error as { reason?: string }).reason ?? 'CALL_FAILED';
        fail(reason, batch.length, `${reason}: ${(error as Error).message}`);
      }
      progress.advance(batch.length);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, batches.length) }, worker));
  } finally {
    progress.stop();
  }
  return summary;
}
