import { eventually } from '@ledgerline/testing';
import { checkHealth, LocalCluster } from '@ledgerline/cluster';
import { Workload } from '../index.js';

/*
 * A metadata instance killed under load: clients and owners reach metadata
 * through a target listing every instance, so they carry on through the
 * other; then the topic's owner is killed as well, so the takeover (lease,
 * lookup, ledger ids) runs through the surviving instance alone.
 */

const PROGRESS_TIMEOUT_MS = 60_000;
const ACKS_BETWEEN_FAULTS = 150;

describe('a metadata instance killed under load', () => {
  let cluster: LocalCluster;
  let workload: Workload | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 2 },
      settings: {
        metadata: { LEDGERLINE_OWNER_SWEEP_INTERVAL_MS: '250' },
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '2000' },
      },
    });
  }, 180_000);
  afterAll(async () => {
    await workload?.close();
    await cluster?.stop();
  }, 120_000);

  it('leaves clients and owners working through the other, a takeover included', async () => {
    workload = await Workload.start(cluster, 'metadata-kill');
    const load = workload;
    for (const metadata of cluster.byRole('metadata')) {
      // Each instance in turn is the one that dies: whichever the channels had picked.
      expect(await load.waitForAcks(ACKS_BETWEEN_FAULTS, PROGRESS_TIMEOUT_MS)).toBe(true);
      await metadata.stop('SIGKILL');
      expect(await load.waitForAcks(ACKS_BETWEEN_FAULTS, PROGRESS_TIMEOUT_MS)).toBe(true);
      const owner = await cluster.ownerOf(load.topic);
      await owner.stop('SIGKILL');
      const killedAtMs = Date.now();
      await eventually(() => load.firstAckSince(killedAtMs) !== undefined, {
        attempts: PROGRESS_TIMEOUT_MS / 20,
        description: 'a publish acknowledged by the new owner',
      });
      const replacements = [cluster.add('writer-owner')];
      // The dead metadata instance comes back on its port, so the next round can kill the other one.
      await metadata.start(PROGRESS_TIMEOUT_MS);
      await Promise.all(replacements);
    }
    await load.stopProducing();
    expect(await load.check()).toEqual([]);
    await eventually(() => load.unconsumed() === 0, {
      attempts: 1_500,
      description: 'the consumer received every acknowledged message',
    });
    for (const instance of cluster.instances.filter((candidate) => candidate.running))
      expect(await checkHealth(instance.address)).toBe('SERVING');
    console.log(`metadata kill: ${load.acks.length} acknowledged, ${load.failures.length} sends failed`);
  }, 300_000);
});
