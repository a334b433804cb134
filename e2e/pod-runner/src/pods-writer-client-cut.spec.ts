import { findRepositoryRoot } from '@ledgerline/cluster';
import {
  NO_VIOLATIONS,
  twoWriterOwnersUnderLoad,
  downAndLeftovers,
  podSpecRun,
  modelViolations,
  ownerMovedOff,
  ownerPodOf,
  stretchAcross,
  summaryFigures,
} from './testing/index.js';

/*
 * Robustness on pods (issue 30, item 2): a writer owner cut off from its
 * clients only, still reaching Redis and the metadata service. It keeps its
 * lease, so a lookup alone would keep naming it. The clients' connection
 * fails once its keepalive goes unanswered (10 s, then 5 s); their next
 * lookup names the address they could not reach, and the metadata service,
 * which still reaches the owner, has it transfer the topic to the other
 * writer owner (unreachable-owners.ts). The clients move there while the
 * partition lasts. The cut lasts until the lookup names another owner and
 * that owner has acknowledged, not a fixed time: the move took 14 s on a
 * quiet machine and may take longer on a loaded one. The model check is
 * modelViolations'.
 */

const root = findRepositoryRoot(__dirname);
/** Bounds the wait for the lookup to name another owner while the clients are cut off. */
const MOVE_TIMEOUT_MS = 120_000;
/** Acknowledgements the new owner gives while the old one is still cut off. */
const ACKS_WHILE_CUT = 300;

describe('a writer owner cut off from its clients only', () => {
  const pods = podSpecRun(root);

  it('moves the topic off the owner its clients cannot reach; nothing lost or stored twice', async () => {
    const { runner, workload } = await twoWriterOwnersUnderLoad(pods, 'clientcut');
    const owner = await ownerPodOf(runner, 'persistent://clientcut/ns/load');

    const cutAtMs = Date.now();
    await runner.partition(owner, ['client']);
    const ownerAtHeal = await ownerMovedOff(runner, 'persistent://clientcut/ns/load', owner, MOVE_TIMEOUT_MS);
    if (ownerAtHeal !== owner) await workload.waitForAcks(workload.acked() + ACKS_WHILE_CUT, 60_000);
    await runner.heal();
    const healedAtMs = Date.now();
    await workload.waitForAcks(workload.acked() + 300, 90_000);
    const summary = await workload.stop();
    const acks = workload.ackRecords();
    pods.workload = undefined;

    const during = acks.filter((ack) => ack.atMs >= cutAtMs && ack.atMs <= healedAtMs).length;
    process.stdout.write(
      `writer owner cut from its clients: faults injected 1 (${owner} partitioned from the client pod for ${healedAtMs - cutAtMs} ms), ` +
        `${summaryFigures(summary)} (${stretchAcross(acks, cutAtMs, workload.stoppedAtMs)} ms across the cut), ${during} acked while cut off, ` +
        `owner at heal ${ownerAtHeal === owner ? 'unchanged' : ownerAtHeal}\n`,
    );
    expect(modelViolations(summary)).toEqual(NO_VIOLATIONS);
    // The clients moved while the partition lasted: another owner took the topic and acknowledged.
    expect(ownerAtHeal).not.toBe(owner);
    expect(during).toBeGreaterThan(0);
    expect(await downAndLeftovers(pods)).toEqual([]);
  }, 900_000);
});
