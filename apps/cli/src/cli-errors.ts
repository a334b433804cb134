import { LedgerlineError } from '@ledgerline/rpc';
import type { CliIo } from './cli-io.js';

/**
 * Prints a failure as `error: <CODE> <REASON>: <message>` (the status code and
 * the stable reason a script can match on) and returns the exit code: 1 for a
 * refused or failed call, 3 when the service could not be reached at all.
 */
export function reportError(io: CliIo, thrown: unknown, url?: string): number {
  const error = LedgerlineError.from(thrown);
  io.err(`error: ${error.code} ${error.reason}: ${error.message}`);
  for (const [key, value] of Object.entries(error.details)) io.err(`  ${key}: ${value}`);
  if (error.code === 'UNAVAILABLE' && url !== undefined && error.reason === 'TRANSPORT_UNAVAILABLE') {
    io.err(`  is a Ledgerline service listening at ${url}? (start one with: ledgerline standalone)`);
    return 3;
  }
  return 1;
}
