import { findRepositoryRoot } from '@ledgerline/cluster';
import {
  NO_VIOLATIONS,
  PodWorkload,
  downAndLeftovers,
  podSpecRun,
  modelViolations,
  stretchAcross,
  summaryFigures,
} from './testing/index.js';

/*
 * `pods drain` of every writer owner pod at once, under load: the
 * writer owner's PodDisruptionBudget (maxUnavailable 1, deploy/writer-owner/
 * pdb.yaml) lets one go at a time, the next only once the Deployment's
 * replacement is ready, so at least two of the three serve throughout and the
 * clients lose nothing.
 */

const root = findRepositoryRoot(__dirname);
const WRITERS = 'ledgerline-writer-owner';
const REPLICAS = 3;
/** How often the readiness of the writer pods is sampled during the drain. */
const SAMPLE_MS = 20;

describe('pods drain of every writer owner pod', () => {
  const pods = podSpecRun(root);

  it('evicts them one at a time within the disruption budget, and nothing is lost', async () => {
    const runner = await pods.up();
    await runner.scale(WRITERS, REPLICAS);
    expect(await runner.waitUntil(() => runner.podsOf(WRITERS).every((pod) => pod.ready), 120_000)).toBe(true);
    await runner.addClientPod('client');
    const workload = (pods.workload = await PodWorkload.start(runner, 'client', 'drain'));
    await workload.waitForAcks(300, 60_000);

    let fewestReady = REPLICAS;
    const sampler = setInterval(() => {
      fewestReady = Math.min(fewestReady, runner.podsOf(WRITERS).filter((pod) => pod.ready).length);
    }, SAMPLE_MS);
    const drained = runner.podsOf(WRITERS).map((pod) => pod.name);
    const startedMs = Date.now();
    let lines: string[];
    try {
      lines = await runner.drain(drained, 300_000);
    } finally {
      clearInterval(sampler);
    }
    const endedMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 90_000);
    const summary = await workload.stop();
    const acks = workload.ackRecords();
    pods.workload = undefined;

    process.stdout.write(
      `pods drain of ${drained.length} writer owner pods: ${endedMs - startedMs} ms, fewest ready ${fewestReady} of ${REPLICAS}, ` +
        `${summaryFigures(summary)} (${stretchAcross(acks, startedMs, endedMs)} ms across the drain)\n${lines.join('\n')}\n`,
    );
    expect(lines).toHaveLength(REPLICAS);
    expect(runner.podsOf(WRITERS).map((pod) => pod.name)).not.toEqual(expect.arrayContaining([drained[0]]));
    expect(runner.podsOf(WRITERS)).toHaveLength(REPLICAS);
    expect(fewestReady).toBeGreaterThanOrEqual(REPLICAS - 1);
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
