import type { MetadataStoreBackend } from './metadata-store-backend.js';
import { nonLinearizablePaths, runCasWorkload } from './cas-history.js';
import type { MetadataStore } from '../store.js';

/**
 * Part of the conformance suite: random concurrent histories of get, put
 * (compare-and-set on the version a client saw, create-only, unconditional)
 * and delete from four clients of one backend over three paths must each be
 * linearizable against a sequential model of a versioned node: versions rise
 * by one per change, a compare-and-set wins only on the latest version, and no
 * acknowledged update is lost.
 */
export function casHistoriesAreLinearizable(context: () => { backend: MetadataStoreBackend; root: string }): void {
  it('keeps random concurrent histories of four clients linearizable', async () => {
    const { backend, root } = context();
    const clients: MetadataStore[] = [];
    try {
      for (let i = 0; i < 4; i++) clients.push(await backend.open());
      for (let round = 0; round < 4; round++) {
        const seed = 1_000 + round;
        const paths = ['a', 'b', 'c'].map((name) => `${root}/linearizable-${round}/${name}`);
        const calls = await runCasWorkload({ clients, paths, callsPerClient: 30, seed });
        expect({ seed, failures: nonLinearizablePaths(calls) }).toEqual({ seed, failures: [] });
        expect(calls.some((call) => call.answer.kind === 'bad-version')).toBe(true);
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  }, 60_000);
}
