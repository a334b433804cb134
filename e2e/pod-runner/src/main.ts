import type { CliIo } from './cli-io.js';
import { runPodsCli } from './program.js';

// `npm run pods -- <command>` (tsx): the pod runner's own command line, apart from `ledgerline`.
const io: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

// Not process.exit: `up` keeps running its pods after runPodsCli resolves.
runPodsCli(io, process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (thrown: unknown) => {
    // Every failure the commands know is reported as an exit status; anything else is a bug, shown whole.
    console.error(thrown);
    process.exitCode = 1;
  },
);
