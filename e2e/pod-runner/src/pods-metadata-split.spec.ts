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
 * Robustness on pods (issue 30, item 2): two metadata replicas behind their
 * Service. First they are cut off from each other (they share nothing but
 * Redis, so nothing may change); then one of them is cut off from Redis
 * while clients and owners still reach it. The model check is
 * modelViolations'.
 */

const root = findRepositoryRoot(__dirname);
/** How long the replicas are cut off from each other: nothing may change meanwhile. */
const SPLIT_MS = 15_000;
/** Past this, into a cut from Redis, the cut replica has given up serving and its clients moved. */
const STORE_CHECKS_MS = 5_000;

describe('metadata replicas cut off from each other, then one of them from Redis', () => {
  const pods = podSpecRun(root);

  it('keeps acknowledging through the other replica and loses nothing', async () => {
    const run = await pods.up();
    await run.scale('ledgerline-metadata', 2);
    expect(await run.waitUntil(() => run.podsOf('ledgerline-metadata').every((pod) => pod.ready), 120_000)).toBe(true);
    await run.addClientPod('client');
    const workload = (pods.workload = await PodWorkload.start(run, 'client', 'mdsplit'));
    await workload.waitForAcks(300, 60_000);
    const [first, second] = run.podsOf('ledgerline-metadata').map((pod) => pod.name);

    const splitAtMs = Date.now();
    await run.partition(first!, [second!]);
    await new Promise((resolve) => setTimeout(resolve, SPLIT_MS));
    await run.heal();
    const splitHealedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 60_000);

    const cutAtMs = Date.now();
    const ackedAtCut = workload.acked();
    await run.partition(first!, ['redis']);
    // Cut until the other replica has served past the cut one's store checks, not for a fixed time.
    await new Promise((resolve) => setTimeout(resolve, STORE_CHECKS_MS));
    await workload.waitForAcks(workload.acked() + 300, 60_000);
    const ackedWhileCut = workload.acked() - ackedAtCut;
    await run.heal();
    const healedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 90_000);
    const summary = await workload.stop();
    const acks = workload.ackRecords();
    pods.workload = undefined;

    process.stdout.write(
      `metadata split: faults injected 2 (${first} cut off from ${second} for ${splitHealedAtMs - splitAtMs} ms, ` +
        `then from redis for ${healedAtMs - cutAtMs} ms), ${summaryFigures(summary)}; ` +
        `longest stretch across the split ${stretchAcross(acks, splitAtMs, splitHealedAtMs)} ms, across the Redis cut ` +
        `${stretchAcross(acks, cutAtMs, healedAtMs)} ms (${ackedWhileCut} acked during it), after the heal ` +
        `${stretchAcross(acks, healedAtMs, workload.stoppedAtMs)} ms\n`,
    );
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    // The other replica kept serving while the first could not reach Redis: acks went on past the first's
    // store checks (two failed tries, 1 s apart) and its clients' move, well inside the cut.
    const servedLate = acks.filter((ack) => ack.atMs > cutAtMs + STORE_CHECKS_MS && ack.atMs < healedAtMs).length;
    expect(servedLate).toBeGreaterThan(0);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
