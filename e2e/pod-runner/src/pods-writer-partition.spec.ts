import { findRepositoryRoot } from '@ledgerline/cluster';
import type { PodRunner } from './pod-runner.js';
import {
  NO_VIOLATIONS,
  twoWriterOwnersUnderLoad,
  downAndLeftovers,
  podSpecRun,
  modelViolations,
  ownerPodOf,
  storedLedgers,
  stretchAcross,
  summaryFigures,
} from './testing/index.js';

/*
 * Robustness on pods (issue 30, item 2): a writer owner cut off from Redis
 * and the metadata service while its clients still reach it. It cannot
 * persist or renew its lease, so it stops acknowledging; once the lease
 * lapses (LEDGERLINE_LEASE_TTL_MS, 5 s in the dev overlay) the other writer
 * owner takes the topic and fences the last ledger, and the clients follow
 * the lookup to it. After the heal, whatever the old owner still had queued
 * meets the fence. The model check: nothing acknowledged lost, nothing stored
 * twice, offsets contiguous, every ack at the offset it named.
 */

const root = findRepositoryRoot(__dirname);
const TOPIC = 'persistent://cut/ns/load';
/** The dev overlay's LEDGERLINE_LEASE_TTL_MS, and how late the old owner may find out its session is gone. */
const LEASE_TTL_MS = 5_000;
const SESSION_SLACK_MS = 2_000;

/** The ledgers in the ledger store and how many of them are fenced. */
function ledgerStates(runner: PodRunner): { ledgers: number; fenced: number } {
  const ledgers = storedLedgers(runner);
  return { ledgers: ledgers.length, fenced: ledgers.filter((ledger) => ledger.fenced).length };
}

describe('a writer owner cut off from Redis and the metadata service, its clients still reaching it', () => {
  const pods = podSpecRun(root);

  it('stops acknowledging, the other owner fences its ledger and takes the clients, and nothing is lost or stored twice', async () => {
    const { runner, workload } = await twoWriterOwnersUnderLoad(pods, 'cut');
    const owner = await ownerPodOf(runner, TOPIC);
    const before = ledgerStates(runner);

    const cutAtMs = Date.now();
    await runner.partition(owner, ['redis', 'ledgerline-metadata']);
    const ackedAtCut = workload.acked();
    // The clients move while the old owner is still cut off: acknowledgements resume through the other owner.
    // The old owner answers what it still owes as soon as its session is lost (about the lease TTL); before it
    // did, the clients waited for its Redis appends to give up (56 to 104 s).
    await workload.waitForAcks(ackedAtCut + 300, 120_000);
    const newOwner = await ownerPodOf(runner, TOPIC);
    const after = ledgerStates(runner);
    await runner.heal();
    const healedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 60_000);
    const summary = await workload.stop();
    const records = workload.ackRecords();
    pods.workload = undefined;

    const during = records.filter((ack) => ack.atMs >= cutAtMs && ack.atMs <= healedAtMs);
    // The old owner's ledger (the last one acknowledged before the cut) takes nothing sent past the lease TTL.
    const oldLedger = records.filter((ack) => ack.atMs < cutAtMs && !ack.duplicate).at(-1)!.ledgerId;
    const lateFromOldOwner = records.filter(
      (ack) => ack.ledgerId === oldLedger && !ack.duplicate && ack.sentAtMs > cutAtMs + LEASE_TTL_MS + SESSION_SLACK_MS,
    );
    const outageMs = stretchAcross(records, cutAtMs, healedAtMs);
    process.stdout.write(
      `writer owner cut from redis and metadata: faults injected 1 (${owner} partitioned from redis and ledgerline-metadata ` +
        `for ${healedAtMs - cutAtMs} ms), ${summaryFigures(summary)} (${outageMs} ms across the cut), ` +
        `${during.length} acked while cut off, ${lateFromOldOwner.length} acked by the old owner past its lease TTL, ` +
        `fenced ledgers ${before.fenced} of ${before.ledgers} -> ${after.fenced} of ${after.ledgers}, new owner ${newOwner}\n`,
    );
    expect(newOwner).not.toBe(owner);
    expect(after.fenced).toBeGreaterThan(before.fenced);
    expect(lateFromOldOwner).toEqual([]);
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
