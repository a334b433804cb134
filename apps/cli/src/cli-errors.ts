import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { CliIo } from './cli-io.js';
import { EXIT_CODES, oneLine } from './exit-status.js';
import { RpcReason } from '@ledgerline/rpc';
import { ClientReason } from '@ledgerline/client';
import { ClusterReason } from '@ledgerline/cluster';

// The exit status and its help live apart, so `--help` loads no client code.
export { CliExit, EXIT_CODES, EXIT_STATUS_HELP, oneLine } from './exit-status.js';

/** The reasons the `ledgerline` command gives to failures of its own command line (exit status 2). */
export const CliReason = {
  FILE_UNREADABLE: 'FILE_UNREADABLE',
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  INVALID_URL: 'INVALID_URL',
  /** --tls-cert without --tls-key, or the reverse. */
  TLS_OPTIONS_INCOMPLETE: 'TLS_OPTIONS_INCOMPLETE',
  /** `tokens create` without a secret or private key to sign with. */
  TOKEN_KEY_MISSING: 'TOKEN_KEY_MISSING',
  /** An owner named on the command line (an instance id or address) that no live owner registered as. */
  UNKNOWN_OWNER: 'UNKNOWN_OWNER',
} as const;

/** Reasons of failures found on this side, in the command line or its settings (exit status 2). */
const USAGE_REASONS: ReadonlySet<string> = new Set([
  ErrorReason.INVALID_CONFIG,
  ClientReason.INVALID_OPTION,
  ...Object.values(CliReason),
  ClusterReason.BAD_CLUSTER_OPTION,
  ClusterReason.APP_MISSING,
]);

/** A failure of the command line itself, found before any call. */
export function usageError(reason: (typeof CliReason)[keyof typeof CliReason], message: string): LedgerlineError {
  return new LedgerlineError('INVALID_ARGUMENT', reason, message);
}

/** The details a message does not already say, as ` (key: value, ...)`. */
function unsaidDetails(error: LedgerlineError): string {
  const unsaid = Object.entries(error.details).filter(([, value]) => !error.message.includes(value));
  return unsaid.length === 0 ? '' : ` (${unsaid.map(([key, value]) => `${key}: ${value}`).join(', ')})`;
}

/**
 * Prints a failure as one line, `error: <CODE> <REASON>: <message>` (the status
 * code and the stable reason a script can match on), and returns the exit
 * status (see EXIT_CODES). `url` is the service an admin command called.
 */
export function reportError(io: CliIo, thrown: unknown, url?: string): number {
  const error = LedgerlineError.from(thrown);
  if (url !== undefined && error.code === 'UNAVAILABLE' && error.reason === RpcReason.TRANSPORT_UNAVAILABLE) {
    // gRPC's own wording ends with an empty "Resolution note:" when there is nothing to resolve.
    const cause = error.message.replace(/\s*Resolution note:\s*$/, '');
    io.err(
      oneLine(
        `error: UNAVAILABLE TRANSPORT_UNAVAILABLE: no Ledgerline service reachable at ${url} ` +
          `(start one with: ledgerline standalone): ${cause}`,
      ),
    );
    return EXIT_CODES.unreachable;
  }
  io.err(oneLine(`error: ${error.code} ${error.reason}: ${error.message}${unsaidDetails(error)}`));
  return USAGE_REASONS.has(error.reason) ? EXIT_CODES.usage : EXIT_CODES.failed;
}
