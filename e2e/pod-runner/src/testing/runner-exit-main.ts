// Runs one small pod, prints the run's prefix and the pod's process ids, then
// ends as asked (pods-runner-exit.spec): `crash` fails (the process exits 1,
// running its exit handlers, as on any uncaught error), `hold` waits to be killed.
import { findRepositoryRoot } from '@ledgerline/cluster';
import { PodRunner } from '../pod-runner.js';

const YAML = `
apiVersion: apps/v1
kind: Deployment
metadata: { name: sleeper }
spec:
  replicas: 1
  selector: { matchLabels: { app: sleeper } }
  template:
    metadata: { labels: { app: sleeper } }
    spec:
      containers:
        - name: node
          image: ledgerline:0.1.0
          command: ['node', '-e', 'setInterval(() => {}, 1000)']
`;

async function main(): Promise<void> {
  const runner = await PodRunner.up({ yaml: YAML, root: findRepositoryRoot(__dirname) });
  const pids = runner.status().flatMap((pod) => pod.pids);
  process.stdout.write(`${JSON.stringify({ prefix: runner.prefix, pids })}\n`);
  if (process.argv[2] === 'crash') throw new Error('the runner process fails after up');
  setInterval(() => undefined, 1_000);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
