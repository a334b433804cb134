import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import type { TopicRow } from '@gen/console_pb';
import { paths } from '../paths';

const ROW_HEIGHT_PX = 28;

/**
 * The loaded topics in a virtual-scrolled list: only the rows in view are in
 * the page, so a million loaded names scroll as smoothly as a hundred. Coming
 * near the end asks for the next page.
 */
export function TopicList({ rows, more, loadMore }: { rows: TopicRow[]; more: boolean; loadMore: () => void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT_PX,
    overscan: 20,
  });
  const items = virtualizer.getVirtualItems();
  const lastShown = items.length === 0 ? -1 : items[items.length - 1]!.index;

  useEffect(() => {
    if (more && lastShown >= rows.length - 50) loadMore();
  }, [more, lastShown, rows.length, loadMore]);

  return (
    <div ref={scroller} className="virtual-list" data-testid="topic-list" data-rows={rows.length}>
      <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
        {items.map((item) => {
          const row = rows[item.index]!;
          return (
            <div
              key={row.name}
              className="virtual-row"
              data-testid="topic-row"
              style={{ height: ROW_HEIGHT_PX, transform: `translateY(${item.start}px)` }}
            >
              <Link to={paths.topic(row.name)}>{row.localName}</Link>
              <span className="muted" data-testid="topic-row-kind">
                {row.partitions > 0
                  ? `${row.partitions} partitions`
                  : row.partitionedTopic !== ''
                    ? `partition of ${row.partitionedTopic}`
                    : ''}
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}
