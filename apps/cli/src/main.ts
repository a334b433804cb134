#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { buildProgram } from './program.js';

// `ledgerline topics list ns | head` closes stdout early: that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

void buildProgram(processIo).parseAsync(process.argv);
