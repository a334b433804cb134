import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { CliIo } from './cli-io.js';
import { RpcReason } from '@ledgerline/rpc';
import { ClientReason } from '@ledgerline/client';
import { ClusterReason } from '@ledgerline/cluster';

/** The reasons the `ledgerline` command gives to failures of its own command line (exit status 2). */
export const CliReason = {
  FILE_UNREADABLE: 'FILE_UNREADABLE',
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  INVALID_URL: 'INVALID_URL',
  /** --tls-cert without --tls-key, or the reverse. */
  TLS_OPTIONS_INCOMPLETE: 'TLS_OPTIONS_INCOMPLETE',
  /** `tokens create` without a secret or private key to sign with. */
  TOKEN_KEY_MISSING: 'TOKEN_KEY_MISSING',
} as const;

/**
 * The exit status of every `ledgerline` command (also printed by --help):
 * 0 done; 1 the service refused or failed the request (or a server command
 * failed); 2 the command line itself is wrong (unknown command or option, a
 * bad value, a missing argument, invalid settings, an unreadable file);
 * 3 the metadata service could not be reached.
 */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

export const EXIT_STATUS_HELP =
  'Exit status: 0 done, 1 refused or failed by the service, 2 bad command line or settings, ' +
  '3 the service could not be reached.';

/** Ends a command with an exit status once it has printed why (runCli turns it into the status). */
export class CliExit extends Error {
  constructor(readonly exitCode: number) {
    super(`the command ended with exit status ${exitCode}`);
  }
}

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

/** One line: a message that spans lines (gRPC's, zod's) is folded, so scripts can read stderr line by line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
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
