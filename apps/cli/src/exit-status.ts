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

/** One line: a message that spans lines (gRPC's, zod's) is folded, so scripts can read stderr line by line. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
