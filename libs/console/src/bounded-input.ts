import { boundedCount as checkedCount } from '@ledgerline/rpc';
import { ConsoleReason } from './console-reason.js';

/** A count from a console request: 0 means `fallback`; 1..max is kept; anything else is refused. */
export function boundedCount(value: number, fallback: number, max: number, what: string): number {
  return checkedCount(value, fallback, max, what, ConsoleReason.CONSOLE_LIMIT_EXCEEDED);
}
