// How numbers read on every page: sizes in binary units, rates with one
// decimal, times in the browser's zone, counts with separators.

const SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(value: bigint | number): string {
  let size = Number(value);
  let unit = 0;
  while (Math.abs(size) >= 1024 && unit < SIZE_UNITS.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(1)} ${SIZE_UNITS[unit]}`;
}

export function formatCount(value: bigint | number): string {
  return typeof value === 'bigint' ? value.toLocaleString('en-US') : Math.round(value).toLocaleString('en-US');
}

export function formatRate(perSecond: number, unit = 'msg/s'): string {
  return `${perSecond.toFixed(1)} ${unit}`;
}

/** A time in ms since the epoch; 0 means never. */
export function formatTime(ms: bigint | number): string {
  const value = Number(ms);
  if (value <= 0) return '—';
  return new Date(value)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
}

export function formatDuration(ms: bigint | number): string {
  const value = Number(ms);
  if (value < 1000) return `${value} ms`;
  if (value < 120_000) return `${(value / 1000).toFixed(1)} s`;
  if (value < 7_200_000) return `${(value / 60_000).toFixed(1)} min`;
  return `${(value / 3_600_000).toFixed(1)} h`;
}

export function formatPosition(position: { ledgerId: bigint; entryId: bigint } | undefined): string {
  return position === undefined ? '—' : `${position.ledgerId}:${position.entryId}`;
}
