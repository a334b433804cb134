import { invalidArgument } from '@ledgerline/errors';
import { ConsoleReason } from './console-reason.js';

/** A count from a request: 0 means `fallback`; 1..max is kept; anything else is refused. */
export function boundedCount(value: number, fallback: number, max: number, what: string): number {
  if (value === 0) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw invalidArgument(
      ConsoleReason.CONSOLE_LIMIT_EXCEEDED,
      `${what} must be 0 (for ${fallback}) or 1 to ${max}, got ${value}`,
      { field: what, max: String(max) },
    );
  }
  return value;
}
