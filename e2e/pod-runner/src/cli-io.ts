import { LedgerlineError } from '@ledgerline/errors';

/** Where the pods command line writes: results to stdout, progress and errors to stderr. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** Exit status: 0 done, 1 failed, 2 bad command line. */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2 } as const;

/** Ends a command with an exit status once it has printed why (runPodsCli turns it into the status). */
export class CliExit extends Error {
  constructor(readonly exitCode: number) {
    super(`the command ended with exit status ${exitCode}`);
  }
}

/** Prints a failure as one line, `error: <CODE> <REASON>: <message>`, and returns the exit status. */
export function reportError(io: CliIo, thrown: unknown): number {
  const error = LedgerlineError.from(thrown);
  io.err(`error: ${error.code} ${error.reason}: ${error.message}`.replace(/\s*\n\s*/g, ' '));
  return EXIT_CODES.failed;
}
