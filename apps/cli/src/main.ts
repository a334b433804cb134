#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { runCli } from './program.js';

// `ledgerline topics list ns | head` closes stdout early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

/**
 * grpc-js logs its own failures to stderr besides the error it reports (a port in use shows twice);
 * errors here are reported once, on one line. GRPC_VERBOSITY=DEBUG still turns its log on. It is
 * loaded only for a command that runs: the help needs no gRPC.
 */
async function quietGrpc(): Promise<void> {
  if (process.env['GRPC_VERBOSITY'] !== undefined) return;
  const { logVerbosity, setLogVerbosity } = await import('@grpc/grpc-js');
  setLogVerbosity(logVerbosity.NONE);
}

// Not process.exit: `ledgerline standalone` keeps serving after runCli resolves.
runCli(processIo, process.argv, { beforeCommand: quietGrpc }).then(
  (code) => {
    process.exitCode = code;
  },
  (thrown: unknown) => {
    // runCli reports every failure it knows as an exit status; anything else is a bug, shown whole.
    console.error(thrown);
    process.exitCode = 1;
  },
);
