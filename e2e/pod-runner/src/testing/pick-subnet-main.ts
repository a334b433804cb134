// Picks a subnet as a pod runner's `up` does (registered, stale runs swept first), prints it, and holds it until stdin closes (subnet-claims.spec).
import { tmpdir } from 'node:os';
import { pickSubnet, removeByPrefix } from '../network.js';
import { registerRun, sweepStaleRuns, unregisterRun } from '../run-registry.js';

const prefix = process.argv[2]!;
sweepStaleRuns();
registerRun({ prefix, pid: process.pid, runDir: tmpdir(), startedAt: new Date().toISOString() });
const release = (): void => {
  removeByPrefix(prefix);
  unregisterRun(prefix);
};
pickSubnet(prefix).then(
  (subnet) => {
    process.stdout.write(`${subnet}\n`);
    if (process.argv[3] === 'hold') process.stdin.on('end', () => (release(), process.exit(0))).resume();
    else release();
  },
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    release();
    process.exit(1);
  },
);
