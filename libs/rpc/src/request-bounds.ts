import { invalidArgument } from '@ledgerline/errors';

/**
 * A count from a request (a page size, a number of cells): 0, proto3's unset,
 * means `fallback`; 1..max is kept; anything else is INVALID_ARGUMENT with
 * `reason`, never cut silently to the bound, so a caller learns the limit.
 */
export function boundedCount(value: number, fallback: number, max: number, what: string, reason: string): number {
  if (value === 0) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw invalidArgument(reason, `${what} must be 0 (for ${fallback}) or 1 to ${max}, got ${value}`, {
      field: what,
      max: String(max),
    });
  }
  return value;
}
