import { useCallback, useState } from 'react';
import { useParams } from 'react-router';
import type { AckRange, GetSubscriptionSummaryResponse } from '@gen/console_pb';
import type { AckMapCell } from '@gen/cursors_pb';
import type { Position } from '@gen/common_pb';
import { consoleClient } from '../api/console-client';
import { useCall } from '../api/use-call';
import { AckMapPicture } from '../components/ack-map';
import { CallView, Facts, Table } from '../components/call-view';
import { SUBSCRIPTION_TYPE_NAMES } from '../format/names';
import { formatBytes, formatCount, formatPosition, formatRate } from '../format/units';

/** Cells of the map: 16 rows of 64 in the page's width. */
const MAP_CELLS = 1024;
const RANGES_PAGE = 100;

interface RangePage {
  from: Position | undefined;
  ranges: AckRange[];
  nextPageToken: string;
}

function Cursor({ summary }: { summary: GetSubscriptionSummaryResponse }) {
  const subscription = summary.subscription;
  return (
    <Facts
      testId="cursor-facts"
      rows={[
        ['type', subscription === undefined ? '—' : (SUBSCRIPTION_TYPE_NAMES[subscription.type] ?? '—')],
        ['mark-delete', formatPosition(summary.markDelete)],
        ['last entry', formatPosition(summary.lastEntry)],
        ['backlog', formatCount(subscription?.backlogMessages ?? 0n)],
        ['acknowledged ranges', formatCount(summary.ackMap?.ackedRanges ?? 0n)],
        ['unacked (delivered)', formatCount(subscription?.unackedMessages ?? 0n)],
        ['redelivered', formatCount(subscription?.redeliveredMessages ?? 0n)],
        ['partly acked batches', summary.partiallyAckedBatches],
        ['cursor state', formatBytes(summary.cursorStateBytes)],
        ['reset epoch', String(summary.resetEpoch)],
      ]}
    />
  );
}

function Ranges({ page, onMore }: { page: RangePage; onMore: () => void }) {
  return (
    <>
      <p className="muted">
        {page.from === undefined ? 'From the mark-delete position' : `From ${formatPosition(page.from)}`}
      </p>
      <Table
        testId="ack-ranges"
        head={['first', 'last', 'entries']}
        rows={page.ranges.map((range) => [
          formatPosition(range.first),
          formatPosition(range.last),
          formatCount(range.entries),
        ])}
        empty="No acknowledged ranges above the mark-delete position."
      />
      {page.nextPageToken !== '' && (
        <button type="button" onClick={onMore}>
          More ranges
        </button>
      )}
    </>
  );
}

function useRanges(topic: string, subscription: string, summary: GetSubscriptionSummaryResponse | undefined) {
  const [picked, setPicked] = useState<RangePage>();
  const fetchFrom = useCallback(
    async (from: Position | undefined, pageToken: string, previous: AckRange[]) => {
      const page = await consoleClient.listAckRanges({ topic, subscription, from, pageSize: RANGES_PAGE, pageToken });
      setPicked({ from, ranges: [...previous, ...page.ranges], nextPageToken: page.nextPageToken });
    },
    [topic, subscription],
  );
  const shown: RangePage | undefined =
    picked ?? (summary && { from: undefined, ranges: summary.ranges, nextPageToken: summary.rangesNextPageToken });
  const pick = (cell: AckMapCell) => void fetchFrom(cell.first, '', []).catch(() => undefined);
  const more = () => {
    if (shown !== undefined) void fetchFrom(shown.from, shown.nextPageToken, shown.ranges).catch(() => undefined);
  };
  return { shown, pick, more };
}

export function SubscriptionPage() {
  const params = useParams();
  const topic = params['topic'] ?? '';
  const subscription = params['subscription'] ?? '';
  const state = useCall(
    () => consoleClient.getSubscriptionSummary({ topic, subscription, cells: MAP_CELLS, rangesPageSize: RANGES_PAGE }),
    `${topic}\n${subscription}`,
  );
  const ranges = useRanges(topic, subscription, state.data);
  return (
    <section data-testid="subscription-page">
      <h1>
        {subscription} <span className="muted">on {topic}</span>
      </h1>
      <CallView state={state}>
        {(summary) => (
          <>
            <Cursor summary={summary} />
            <h2>Acknowledgements</h2>
            {summary.ackMap && <AckMapPicture map={summary.ackMap} onPick={ranges.pick} />}
            {ranges.shown && <Ranges page={ranges.shown} onMore={ranges.more} />}
            <h2>Consumers</h2>
            <Table
              testId="consumers"
              head={['consumer', 'unacked', 'permits', 'blocked', 'out', 'active']}
              rows={summary.consumers.map((consumer) => [
                consumer.name,
                formatCount(consumer.unackedMessages),
                consumer.availablePermits,
                consumer.blockedOnUnacked ? 'yes' : 'no',
                formatRate(consumer.msgRateOut),
                consumer.active ? 'yes' : 'no',
              ])}
              empty="No consumer connected."
            />
          </>
        )}
      </CallView>
    </section>
  );
}
