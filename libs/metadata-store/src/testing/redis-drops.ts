import { ConnectionDropper } from '@ledgerline/testing';
import { nonLinearizablePaths, runCasWorkload, type CasCall } from './cas-history.js';
import type { MetadataStore } from '../store.js';

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Random concurrent compare-and-set histories from several clients while
 * every connection is dropped again and again; returns the calls and the
 * paths whose history is not linearizable.
 */
export async function casUnderConnectionDrops(
  clients: MetadataStore[],
  nodeUrls: readonly string[],
  root: string,
  rounds: number,
): Promise<{ calls: CasCall[]; failures: string[] }> {
  const calls: CasCall[] = [];
  const failures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const dropper = new ConnectionDropper(nodeUrls, ['plain', 'busy']);
    try {
      const seed = 7_000 + round;
      const drops = dropper.run(6, 15);
      const paths = ['a', 'b'].map((name) => `${root}/drops-${round}/${name}`);
      const [shared, ...solo] = await Promise.all([
        // Paced calls, so the shared histories span the drops.
        runCasWorkload({ clients, paths, callsPerClient: 20, seed, between: () => pause(2) }),
        // Each client also works a path of its own as fast as it can: there any conflict is with itself.
        ...clients.map((client, i) =>
          runCasWorkload({
            clients: [client],
            paths: [`${root}/drops-${round}/solo-${i}`],
            callsPerClient: 150,
            seed: seed + i,
          }),
        ),
      ]);
      await drops;
      const history = [...shared!, ...solo.flat()];
      calls.push(...history);
      failures.push(...nonLinearizablePaths(history).map((failure) => `seed ${seed}: ${failure}`));
    } finally {
      dropper.close();
    }
  }
  return { calls, failures };
}
