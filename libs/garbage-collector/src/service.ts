import { invalidArgument } from '@ledgerline/errors';
import type { GarbageCollectorService } from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import type { GarbageCollector, PassReport } from './collector.js';
import { CollectorReason } from './errors.js';

/** Pending deletions per ListPendingDeletions page when the request names none, and the most it may ask for. */
export const DEFAULT_PENDING_PAGE = 100;
export const MAX_PENDING_PAGE = 1_000;

function reportMessage(report: PassReport) {
  return {
    ledgersDeleted: BigInt(report.ledgersDeleted),
    orphansDeleted: BigInt(report.orphansDeleted),
    failures: BigInt(report.failures),
    markersCleared: BigInt(report.markersCleared),
    durationMs: BigInt(Math.round(report.durationMs)),
    topicsFinished: BigInt(report.topicsFinished),
    ownerTagMismatches: BigInt(report.ownerTagMismatches),
    indexEntriesRemoved: BigInt(report.indexEntriesRemoved),
    managedLedgersVisited: BigInt(report.managedLedgersVisited),
    metadataReads: BigInt(report.metadataReads),
    ledgersSwept: BigInt(report.ledgersSwept),
    fullScan: report.fullScan,
  };
}

/** The page token is the last ledger id of the previous page, in decimal. */
function parsePageToken(token: string): number {
  if (token === '') return -1;
  const value = Number(token);
  if (!/^\d{1,16}$/.test(token) || !Number.isSafeInteger(value)) {
    throw invalidArgument(CollectorReason.BAD_PAGE_TOKEN, 'page_token must be the next_page_token of a previous page');
  }
  return value;
}

function parsePageSize(size: number): number {
  if (size === 0) return DEFAULT_PENDING_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PENDING_PAGE) {
    throw invalidArgument(
      CollectorReason.BAD_PAGE_SIZE,
      `page_size must be 1 to ${MAX_PENDING_PAGE} (0 for ${DEFAULT_PENDING_PAGE})`,
    );
  }
  return size;
}

/** ledgerline.v1.GarbageCollectorService over a GarbageCollector. */
export function garbageCollectorServiceImpl(collector: GarbageCollector): ServiceImpl<typeof GarbageCollectorService> {
  return {
    async getStatus() {
      const status = collector.status();
      return {
        passes: BigInt(status.passes),
        lastPassAtMs: BigInt(status.lastPassAtMs),
        ledgersDeleted: BigInt(status.ledgersDeleted),
        orphansDeleted: BigInt(status.orphansDeleted),
        deletionFailures: BigInt(status.failures),
        pendingDeletions: BigInt(status.pendingDeletions),
        instanceId: status.instanceId,
        ownedShards: status.ownedShards,
        members: status.members,
        ownerTagMismatches: BigInt(status.ownerTagMismatches),
        oldestPendingAgeMs: BigInt(Math.round(status.oldestPendingAgeMs)),
        topicsFinished: BigInt(status.topicsFinished),
        referencedMarkersDropped: BigInt(status.referencedMarkersDropped),
        orphansUntagged: BigInt(status.orphansUntagged),
        lastFullScanAtMs: BigInt(status.lastFullScanAtMs),
        gcIntervalMs: BigInt(collector.config.gcIntervalMs),
        hintDelayMs: BigInt(collector.config.hintDelayMs),
        orphanSweepIntervalMs: BigInt(collector.config.orphanSweepIntervalMs),
        orphanGraceMs: BigInt(collector.config.orphanGraceMs),
        lastOrphanSweepAtMs: BigInt(status.lastOrphanSweepAtMs),
      };
    },
    async triggerPass(request) {
      const report = await collector.triggerPass({ sweepOrphans: request.sweepOrphans, fullScan: request.fullScan });
      return { report: reportMessage(report) };
    },
    async listPendingDeletions(request) {
      const after = parsePageToken(request.pageToken);
      const limit = parsePageSize(request.pageSize);
      const page = collector.listPending(after, limit + 1);
      const shown = page.slice(0, limit);
      return {
        deletions: shown.map((p) => ({
          ledgerId: BigInt(p.ledgerId),
          managedLedgerPath: p.managedLedgerPath,
          component: p.component,
          markedAtMs: BigInt(p.markedAtMs),
          attempts: p.attempts,
          lastError: p.lastError,
          nextAttemptAtMs: BigInt(p.nextAttemptAtMs),
          refusedReason: p.refusedReason ?? '',
          cursorName: p.cursorName ?? '',
        })),
        nextPageToken: page.length > limit ? String(shown[shown.length - 1]!.ledgerId) : '',
      };
    },
  };
}
