import type { AckMap, AckMapCell } from '@gen/cursors_pb';
import { formatCount, formatPosition } from '../format/units';

/**
 * The colour of a cell: green for what is acknowledged, red for the holes,
 * mixed by the share acknowledged, so a cell of a million alternating holes
 * reads as the half-and-half it is rather than as noise.
 */
export function cellColour(cell: AckMapCell): string {
  if (cell.entries === 0n) return '#e5e7eb';
  const share = Number(cell.ackedEntries) / Number(cell.entries);
  const hue = Math.round(share * 120);
  return `hsl(${hue} 70% 45%)`;
}

function cellTitle(cell: AckMapCell): string {
  const offsets = cell.firstOffset < 0n ? '' : `, offsets ${cell.firstOffset} … ${cell.lastOffset}`;
  return (
    `${formatPosition(cell.first)} … ${formatPosition(cell.last)}${offsets}\n` +
    `${formatCount(cell.ackedEntries)} of ${formatCount(cell.entries)} entries acknowledged, ${formatCount(cell.ranges)} ranges`
  );
}

/**
 * The ack-hole map: the span from the mark-delete position to the last entry
 * in equal cells, read left to right and top to bottom. A click asks for the
 * exact ranges from that cell on.
 */
export function AckMapPicture({ map, onPick }: { map: AckMap; onPick: (cell: AckMapCell) => void }) {
  return (
    <figure className="ack-map" data-testid="ack-map" data-cells={map.cells.length}>
      <div className="ack-cells">
        {map.cells.map((cell, index) => (
          <button
            key={index}
            type="button"
            className="ack-cell"
            style={{ background: cellColour(cell) }}
            title={cellTitle(cell)}
            onClick={() => onPick(cell)}
            aria-label={`cell ${index + 1}`}
          />
        ))}
      </div>
      <figcaption>
        <span className="swatch" style={{ background: 'hsl(120 70% 45%)' }} /> acknowledged
        <span className="swatch" style={{ background: 'hsl(60 70% 45%)' }} /> half
        <span className="swatch" style={{ background: 'hsl(0 70% 45%)' }} /> unacknowledged ·{' '}
        {formatCount(map.spanEntries)} entries from {formatPosition(map.spanFirst)} to {formatPosition(map.spanLast)} in{' '}
        {map.cells.length} cells · {formatCount(map.ackedRanges)} acknowledged ranges, {formatCount(map.ackedEntries)}{' '}
        entries
        {map.unplacedRanges > 0n && ` · ${formatCount(map.unplacedRanges)} ranges in trimmed ledgers`}
      </figcaption>
    </figure>
  );
}
