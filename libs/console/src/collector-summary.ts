import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type { GetCollectorSummaryRequest, GetCollectorSummaryResponseSchema } from '@ledgerline/proto';
import { boundedCount } from './bounded-input.js';
import { checkInternalAccess } from './internal-access.js';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { ConsoleReason } from './console-reason.js';
import { DEFAULT_PENDING_PAGE, MAX_PENDING_PAGE } from './limits.js';

/**
 * The collector page: its counters, intervals and a page of the deletions it
 * is waiting on. A collector that cannot be reached is a page saying so
 * (reachable false, with the reason); a refusal of the caller's rights is the
 * caller's answer.
 */
export async function collectorSummary(
  context: ConsoleContext,
  caller: Caller,
  request: GetCollectorSummaryRequest,
): Promise<MessageInitShape<typeof GetCollectorSummaryResponseSchema>> {
  const pageSize = boundedCount(request.pageSize, DEFAULT_PENDING_PAGE, MAX_PENDING_PAGE, 'page_size');
  const collector = context.backends.collector;
  if (collector === undefined) {
    return { reachable: false, errorReason: ConsoleReason.CONSOLE_SERVICE_NOT_CONFIGURED };
  }
  await checkInternalAccess(context, caller, '/ledgerline.v1.GarbageCollectorService/GetStatus');
  try {
    const [status, pending] = await Promise.all([
      collector.getStatus({}, caller.callOptions()),
      collector.listPendingDeletions({ pageToken: request.pageToken, pageSize }, caller.callOptions()),
    ]);
    return {
      reachable: true,
      passes: status.passes,
      lastPassAtMs: status.lastPassAtMs,
      ledgersDeleted: status.ledgersDeleted,
      orphansDeleted: status.orphansDeleted,
      orphansUntagged: status.orphansUntagged,
      deletionFailures: status.deletionFailures,
      pendingDeletions: status.pendingDeletions,
      oldestPendingAgeMs: status.oldestPendingAgeMs,
      ownerTagMismatches: status.ownerTagMismatches,
      lastFullScanAtMs: status.lastFullScanAtMs,
      members: status.members,
      reclaimDelayMs: status.hintDelayMs,
      orphanSweepIntervalMs: status.orphanSweepIntervalMs,
      gcIntervalMs: status.gcIntervalMs,
      orphanGraceMs: status.orphanGraceMs,
      lastOrphanSweepAtMs: status.lastOrphanSweepAtMs,
      deletions: pending.deletions.map((deletion) => ({
        ledgerId: deletion.ledgerId,
        managedLedgerPath: deletion.managedLedgerPath,
        component: deletion.component,
        cursorName: deletion.cursorName,
        markedAtMs: deletion.markedAtMs,
        attempts: deletion.attempts,
        lastError: deletion.lastError,
        nextAttemptAtMs: deletion.nextAttemptAtMs,
        refusedReason: deletion.refusedReason,
      })),
      nextPageToken: pending.nextPageToken,
    };
  } catch (thrown) {
    const error = LedgerlineError.from(thrown);
    if (error.code !== 'UNAVAILABLE' && error.code !== 'DEADLINE_EXCEEDED') throw error;
    return { reachable: false, errorReason: error.reason };
  }
}
