import { formatBytes, formatCount, formatDuration, formatPosition, formatTime } from './units';

describe('how numbers read on the console', () => {
  it('sizes in binary units, counts with separators', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536n)).toBe('1.5 KiB');
    expect(formatBytes(5n * 1024n ** 3n)).toBe('5.0 GiB');
    expect(formatCount(100_000n)).toBe('100,000');
    expect(formatCount(1234.4)).toBe('1,234');
  });

  it('times in UTC to the second, never for 0; durations in the unit that reads best', () => {
    expect(formatTime(0n)).toBe('—');
    expect(formatTime(Date.UTC(2026, 11, 6, 11, 40, 5, 123))).toBe('2026-12-06 11:40:05Z');
    expect(formatDuration(250)).toBe('250 ms');
    expect(formatDuration(90_000n)).toBe('90.0 s');
    expect(formatDuration(600_000)).toBe('10.0 min');
    expect(formatDuration(10_800_000)).toBe('3.0 h');
  });

  it('positions as ledger:entry', () => {
    expect(formatPosition({ ledgerId: 7n, entryId: 42n })).toBe('7:42');
    expect(formatPosition(undefined)).toBe('—');
  });
});
