// A writer owner cut off from its ledger store (Redis) alone for 20 s, its
// session with the metadata service intact (issue 43's target: the longest
// stretch without an acknowledgement on its topic at most 5 s across the cut,
// no send failed, nothing lost or stored twice). Runs the dev overlay as pods
// (each pod a network namespace on this machine, so it needs root), scales
// it to 2 writer owners, starts the pod tests' workload (an SDK producer and
// consumer in a client pod, one topic), cuts the topic's owner from Redis
// for 20 s and heals it. The same scenario as pods-writer-store-cut.spec.ts,
// which asserts it; this prints the figures.
//
// Run: npx tsx bench/writer-store-cut.ts
import { findRepositoryRoot } from '@ledgerline/cluster';
import {
  devOverlayRun,
  downAndLeftovers,
  ensureAppBundles,
  modelViolations,
  ownerMovedOff,
  ownerPodOf,
  stretchAcross,
  twoWriterOwnersUnderLoad,
} from '@ledgerline/pod-runner/testing';
import { loadavg } from 'node:os';
import { runAlone, type BenchReport } from './bench-report.js';

const TOPIC = 'persistent://storecut/ns/load';
const CUT_MS = 20_000;
const TARGET_STRETCH_MS = 5_000;
/** Acknowledgements the workload gets after the move, and after the heal, before the figures are read. */
const ACKS_AFTER = 300;

const SECTION = 'A writer owner cut off from its ledger store for 20 s (pods)';
const SETUP =
  'the dev overlay as pods on this machine (network namespaces), 2 writer owners, an SDK producer and consumer ' +
  `in a client pod on one topic; the topic's owner is cut from Redis alone for ${CUT_MS / 1000} s, its metadata ` +
  `session intact; target: the longest stretch without an ack at most ${TARGET_STRETCH_MS} ms, no send failed, ` +
  'nothing lost or stored twice';

async function measure(root: string) {
  await ensureAppBundles(root);
  const pods = devOverlayRun(root);
  try {
    const { runner, workload } = await twoWriterOwnersUnderLoad(pods, 'storecut');
    const owner = await ownerPodOf(runner, TOPIC);
    const loadAverage = loadavg()[0]!;
    const cutAtMs = Date.now();
    await runner.partition(owner, ['redis']);
    const ackedAtCut = workload.acked();
    const movedTo = await ownerMovedOff(runner, TOPIC, owner, 60_000);
    const movedAtMs = Date.now();
    await workload.waitForAcks(ackedAtCut + ACKS_AFTER, 60_000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, cutAtMs + CUT_MS - Date.now())));
    await runner.heal();
    const healedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + ACKS_AFTER, 60_000);
    const summary = await workload.stop();
    pods.workload = undefined;
    const stretchMs = stretchAcross(workload.ackRecords(), cutAtMs, healedAtMs);
    const violations = Object.values(modelViolations(summary)).reduce((sum, count) => sum + count, 0);
    return {
      'cut ms': healedAtMs - cutAtMs,
      'lookup moved off ms': movedTo === owner ? 'never' : movedAtMs - cutAtMs,
      'longest stretch without an ack ms': stretchMs,
      acknowledged: summary.acked,
      'sends failed': summary.failed,
      'lost, duplicated or misplaced': violations,
      target: `<= ${TARGET_STRETCH_MS} ms, 0 failed`,
      verdict: stretchMs <= TARGET_STRETCH_MS && summary.failed === 0 && violations === 0 ? 'met' : 'missed',
      'load avg': Number(loadAverage.toFixed(2)),
    };
  } finally {
    await pods.workload?.kill();
    const leftovers = await downAndLeftovers(pods);
    if (leftovers.length > 0) console.error(`the pod run left behind: ${leftovers.join(', ')}`);
  }
}

export async function run(): Promise<BenchReport> {
  if (process.getuid?.() !== 0) {
    const reason = 'pods are network namespaces, which need root';
    return { section: SECTION, setup: SETUP, tables: [], comparisons: [], notMeasured: [{ figure: SECTION, reason }] };
  }
  const row = await measure(findRepositoryRoot(__dirname));
  return { section: SECTION, setup: SETUP, tables: [{ title: 'store cut', rows: [row] }], comparisons: [] };
}

runAlone(module, run);
