import { LocalCluster, CLUSTER_ROLES } from '@ledgerline/cluster';
import { eventually } from '@ledgerline/testing';
import { Workload } from '../index.js';

/*
 * SIGTERM of each service under load, as a rolling update or a scale-down
 * sends it: the process drains and leaves on its own within the drain bound
 * (plus the closers' bound), with exit status 0, and the load sees nothing
 * worse than a call it retried: no publish fails, nothing acknowledged is lost.
 */

const DRAIN_TIMEOUT_MS = 5_000;
/** The drain, then the closers (bus, stores: 5 s each at most, three of them). */
const STOP_BOUND_MS = DRAIN_TIMEOUT_MS + 15_000;
const PROGRESS_TIMEOUT_MS = 60_000;
const ACKS_BETWEEN_STOPS = 150;

describe('SIGTERM of each service under load', () => {
  let cluster: LocalCluster;
  let workload: Workload | undefined;

  beforeAll(async () => {
    const drain = { LEDGERLINE_DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS) };
    cluster = await LocalCluster.start({
      counts: { metadata: 2, 'writer-owner': 2, 'readonly-owner': 2, 'garbage-collector': 2 },
      settings: {
        metadata: drain,
        'writer-owner': { ...drain, LEDGERLINE_LEASE_TTL_MS: '2000' },
        'readonly-owner': { ...drain, LEDGERLINE_LEASE_TTL_MS: '2000' },
        'garbage-collector': drain,
      },
    });
  }, 180_000);
  afterAll(async () => {
    await workload?.close();
    await cluster?.stop();
  }, 120_000);

  it('drains each within the bound, exits 0, and no publish fails', async () => {
    workload = await Workload.start(cluster, 'sigterm');
    const load = workload;
    const stopMs: string[] = [];
    for (const role of CLUSTER_ROLES.filter((candidate) => cluster.byRole(candidate).length > 0)) {
      expect(await load.waitForAcks(ACKS_BETWEEN_STOPS, PROGRESS_TIMEOUT_MS)).toBe(true);
      // An owner stopped is the one serving the load's topic; the others are the first of their kind.
      const victim =
        role === 'writer-owner' || role === 'readonly-owner'
          ? await cluster.ownerOf(load.topic, role)
          : cluster.byRole(role).find((i) => i.running)!;
      const startedMs = Date.now();
      expect(await victim.stop('SIGTERM', STOP_BOUND_MS)).toBe(true);
      stopMs.push(`${role} ${Date.now() - startedMs} ms`);
      const exited = await victim.exited;
      // A failure names the service and shows its last lines (which closer failed, or whether the drain was forced).
      expect({ role, ...exited, output: exited?.code === 0 ? '' : victim.output.slice(-2_000) }).toEqual({
        role,
        code: 0,
        signal: null,
        output: '',
      });
      await cluster.add(role);
    }
    expect(await load.waitForAcks(ACKS_BETWEEN_STOPS, PROGRESS_TIMEOUT_MS)).toBe(true);
    await load.stopProducing();
    expect(load.failures).toEqual([]);
    expect(await load.check()).toEqual([]);
    // Both consumers, the one on the writer and the one reading through the read-only owners, get everything.
    await eventually(() => load.unconsumed() === 0 && load.unconsumedOnReadSide() === 0, {
      attempts: 600,
      intervalMs: 100,
    }).catch((error: unknown) => {
      throw new Error(
        `${String(error)}: ${load.unconsumed()} acknowledged messages not received by the consumer on the writer, ` +
          `${load.unconsumedOnReadSide()} not received through the read-only owners; ` +
          `consumers that stopped: ${JSON.stringify(load.consumerStops)}`,
      );
    });
    console.log(`SIGTERM: ${load.acks.length} acknowledged, 0 sends failed; stops took ${stopMs.join(', ')}`);
  }, 300_000);
});
