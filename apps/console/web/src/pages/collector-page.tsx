import { useState } from 'react';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { CallView, Facts, Table } from '../components/call-view';
import { formatCount, formatDuration, formatTime } from '../format/units';

const PAGE_SIZE = 100;

export function CollectorPage() {
  const [pageToken, setPageToken] = useState('');
  const state = useCall(
    () => consoleClient.getCollectorSummary({ pageSize: PAGE_SIZE, pageToken }),
    `collector\n${pageToken}`,
    5_000,
  );
  return (
    <section data-testid="collector-page">
      <h1>Garbage collector</h1>
      <CallView state={state}>
        {(answer) =>
          !answer.reachable ? (
            <div className="error" role="alert">
              No collector answered: <code>{answer.errorReason}</code>
            </div>
          ) : (
            <>
              <Facts
                testId="collector-facts"
                rows={[
                  ['pending deletions', formatCount(answer.pendingDeletions)],
                  ['oldest pending', formatDuration(answer.oldestPendingAgeMs)],
                  ['reclaim delay', answer.reclaimDelayMs > 0n ? formatDuration(answer.reclaimDelayMs) : 'unknown'],
                  [
                    'passes',
                    `${formatCount(answer.passes)} (every ${formatDuration(answer.gcIntervalMs)}), last ${formatTime(answer.lastPassAtMs)}`,
                  ],
                  ['ledgers deleted', formatCount(answer.ledgersDeleted)],
                  ['deletion failures', formatCount(answer.deletionFailures)],
                  [
                    'orphan sweeps',
                    `every ${formatDuration(answer.orphanSweepIntervalMs)}, last ${formatTime(answer.lastOrphanSweepAtMs)}, grace ${formatDuration(answer.orphanGraceMs)}`,
                  ],
                  [
                    'orphans deleted',
                    `${formatCount(answer.orphansDeleted)} (${formatCount(answer.orphansUntagged)} untagged)`,
                  ],
                  ['last full scan', formatTime(answer.lastFullScanAtMs)],
                  ['owner tag mismatches', formatCount(answer.ownerTagMismatches)],
                  ['collectors', answer.members],
                ]}
              />
              <h2>Pending deletions</h2>
              <Table
                testId="pending-deletions"
                head={[
                  'ledger',
                  'managed ledger',
                  'component',
                  'marked',
                  'attempts',
                  'last error',
                  'next attempt',
                  'refused',
                ]}
                rows={answer.deletions.map((deletion) => [
                  String(deletion.ledgerId),
                  deletion.managedLedgerPath,
                  deletion.cursorName === '' ? deletion.component : `${deletion.component} ${deletion.cursorName}`,
                  formatTime(deletion.markedAtMs),
                  deletion.attempts,
                  deletion.lastError,
                  formatTime(deletion.nextAttemptAtMs),
                  deletion.refusedReason,
                ])}
                empty="Nothing is waiting to be deleted."
              />
              <div className="pager">
                {pageToken !== '' && (
                  <button type="button" onClick={() => setPageToken('')}>
                    First page
                  </button>
                )}
                {answer.nextPageToken !== '' && (
                  <button type="button" onClick={() => setPageToken(answer.nextPageToken)}>
                    Next page
                  </button>
                )}
              </div>
            </>
          )
        }
      </CallView>
    </section>
  );
}
