import { join } from 'node:path';
import { findRepositoryRoot } from '@ledgerline/cluster';
import type { PodRunner } from './pod-runner.js';
import {
  NO_VIOLATIONS,
  PodWorkload,
  downAndLeftovers,
  modelViolations,
  podLogTails,
  podSpecRun,
  storedLedgers,
  summaryFigures,
} from './testing/index.js';

/*
 * Robustness on pods (issue 30, item 2): the garbage collector cut off from
 * Redis and the metadata service while it deletes the ledgers of topics
 * being deleted, a live workload running beside them. Nothing live may be
 * deleted (every ledger of the live topic stays, and the workload's model
 * check holds), and once the cut heals nothing dead may stay (no ledger of a
 * deleted topic is left in the store).
 */

const root = findRepositoryRoot(__dirname);
const GC_MAIN = join(__dirname, 'testing', 'gc-load-main.ts');
const SERVICE = 'ledgerline-metadata:6650';
const DOOMED = 'gcpart';
const TOPICS = 30;
const MESSAGES = 20;
/** How long the collector stays cut off after the last topic was deleted. */
const CUT_AFTER_DELETES_MS = 5_000;
/** How long the collector may take to delete what is left once it is back. */
const RECLAIM_MS = 240_000;

/** The ledgers of the deleted topics still in the store. */
function doomedLedgers(runner: PodRunner): number {
  return storedLedgers(runner).filter((ledger) => ledger.topic.startsWith(`persistent://${DOOMED}/`)).length;
}

describe('the garbage collector partitioned mid-pass', () => {
  const pods = podSpecRun(root);

  it('deletes nothing live and, once healed, leaves no ledger of a deleted topic behind', async () => {
    const runner = await pods.up();
    await runner.addClientPod('client');
    const workload = (pods.workload = await PodWorkload.start(runner, 'client', 'gclive'));
    await workload.waitForAcks(200, 60_000);

    const node = process.execPath;
    const fill = runner.exec('client', node, [
      '--import',
      'tsx',
      GC_MAIN,
      'fill',
      SERVICE,
      DOOMED,
      `${TOPICS}`,
      `${MESSAGES}`,
    ]);
    await fill.waitForOutput(/"event":"filled"/, 240_000);
    const before = storedLedgers(runner);
    const doomedBefore = before.filter((ledger) => ledger.topic.startsWith(`persistent://${DOOMED}/`));
    const liveBefore = before.filter((ledger) => ledger.topic.startsWith('persistent://gclive/'));
    expect(doomedBefore.length).toBeGreaterThanOrEqual(TOPICS);

    const collector = runner.podsOf('ledgerline-garbage-collector')[0]!.name;
    const deleting = runner.exec('client', node, ['--import', 'tsx', GC_MAIN, 'delete', SERVICE, DOOMED, `${TOPICS}`]);
    // Mid-pass: the collector has deleted ledgers of the first topics when the cut comes.
    await deleting.waitForOutput(new RegExp(`"event":"deleted","count":${TOPICS / 2},`), 120_000);
    const cutAtMs = Date.now();
    await runner.partition(collector, ['redis', 'ledgerline-metadata']);
    const leftAtCut = doomedLedgers(runner);
    await deleting.waitForOutput(/"event":"all-deleted"/, 120_000);
    await new Promise((resolve) => setTimeout(resolve, CUT_AFTER_DELETES_MS));
    const leftWhileCut = doomedLedgers(runner);
    await runner.heal();
    const healedAtMs = Date.now();

    let doomedLeft = leftWhileCut;
    const reclaimed = await runner.waitUntil(() => (doomedLeft = doomedLedgers(runner)) === 0, RECLAIM_MS);
    // A collector that does not catch up shows why: its pod's state and what every pod logged above info.
    const collectorState = JSON.stringify(runner.status().find((pod) => pod.name === collector) ?? 'gone');
    const why = reclaimed ? '' : `${doomedLeft} left; ${collectorState}\n${podLogTails(runner.runDir)}`;
    expect([reclaimed, why]).toEqual([true, '']);
    const reclaimedMs = Date.now() - healedAtMs;
    await workload.waitForAcks(workload.acked() + 200, 60_000);
    const summary = await workload.stop();
    pods.workload = undefined;
    const liveAfter = new Set(
      storedLedgers(runner)
        .filter((ledger) => ledger.topic.startsWith('persistent://gclive/'))
        .map((ledger) => ledger.ledgerId),
    );
    const liveDeleted = liveBefore.filter((ledger) => !liveAfter.has(ledger.ledgerId)).length;

    process.stdout.write(
      `garbage collector cut from redis and metadata mid-pass: faults injected 1 (${collector} partitioned for ` +
        `${healedAtMs - cutAtMs} ms), ${TOPICS} topics deleted with ${doomedBefore.length} ledgers; ` +
        `${leftAtCut} of them left at the cut, ${leftWhileCut} after ${CUT_AFTER_DELETES_MS} ms cut off, ` +
        `0 left ${reclaimedMs} ms after the heal; live ledgers ${liveBefore.length}, deleted ${liveDeleted}; ` +
        `${summaryFigures(summary)}\n`,
    );
    // Cut mid-pass: dead ledgers were left at the cut, and still were after the collector was cut off a while.
    expect(leftAtCut).toBeGreaterThan(0);
    expect(leftWhileCut).toBeGreaterThan(0);
    expect(liveDeleted).toBe(0);
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
