import { LedgerlineError } from '@ledgerline/errors';
import type { CursorData } from '@ledgerline/proto';
import type { WriterClients } from './writer-clients.js';

/**
 * The writer's cursor as a read-only owner merges it (PIP-63 with PIP-381's
 * large cursors). A cursor of at most `maxRanges` acknowledged ranges (the
 * setting cursorMergeMaxRanges, 50,000 by default: about 1.5 MB) comes whole
 * in one GetCursor answer. A larger one, or one whose answer the writer's
 * message bound refuses (about 300,000 ranges at 4 MiB), comes as its
 * summary: mark-delete position, reset epoch and properties without the ranges. This
 * owner then knows what it acknowledged itself and everything below
 * mark-delete; an entry acknowledged on another owner above mark-delete may
 * be delivered here again (at least once), and nothing is lost, because the
 * writer's state only grows by union.
 */
export async function readWriterCursor(
  writer: WriterClients,
  writerTopic: string,
  subscription: string,
  maxRanges: number,
): Promise<CursorData | undefined> {
  const request = { topic: writerTopic, subscription };
  const summary = await writer.call(writerTopic, (c) =>
    c.cursors.getCursorSummary({ ...request, cells: 1 }, writer.callOptions),
  );
  if ((summary.ackMap?.ackedRanges ?? 0n) > BigInt(maxRanges)) return summary.cursor;
  try {
    const whole = await writer.call(writerTopic, (c) => c.cursors.getCursor(request, writer.callOptions));
    return whole.cursor;
  } catch (thrown) {
    if (LedgerlineError.from(thrown).code !== 'RESOURCE_EXHAUSTED') throw thrown;
    return summary.cursor;
  }
}
