import type { MetadataStoreBackend } from './metadata-store-backend.js';
import type { MetadataStore } from '../store.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Part of the conformance suite: once any reader has seen a dead owner's
 * ephemeral node gone, no read begun after that shows it again, by `get` or
 * by `children`, from any client.
 */
export function expiredNodesStayGone(context: () => { backend: MetadataStoreBackend; root: string }): void {
  it('never shows an ephemeral node again once a reader saw it gone', async () => {
    const { backend, root } = context();
    const owner = await backend.open({ sessionSweepIntervalMs: 100 });
    const readers: MetadataStore[] = [];
    try {
      for (let i = 0; i < 3; i++) readers.push(await backend.open({ sessionSweepIntervalMs: 100 }));
      const parent = `${root}/expiry-observed`;
      // Short, so the test is quick, yet long enough that the put right after opening finds it alive on a busy machine.
      const session = await owner.openSession({ ttlMs: 1_000 });
      await owner.put(`${parent}/lease`, Uint8Array.of(1), { session });
      await backend.crash(owner);
      let clock = 0;
      let goneSeenAt = Infinity;
      const late: string[] = [];
      const watch = async (reader: MetadataStore, index: number): Promise<void> => {
        let goneReads = 0;
        for (let n = 0; n < 2_000 && goneReads < 20; n++) {
          const issuedAt = ++clock;
          const byListing = (n + index) % 2 === 1;
          const shown = byListing
            ? (await reader.children(parent)).names.includes('lease')
            : (await reader.get(`${parent}/lease`)) !== undefined;
          const answeredAt = ++clock;
          if (shown && issuedAt > goneSeenAt)
            late.push(`reader ${index} saw it at ${issuedAt}, gone since ${goneSeenAt}`);
          if (!shown) {
            goneReads++;
            goneSeenAt = Math.min(goneSeenAt, answeredAt);
          }
          await pause(3);
        }
      };
      await Promise.all(readers.map(watch));
      expect(late).toEqual([]);
      expect(goneSeenAt).toBeLessThan(Infinity);
    } finally {
      await owner.close().catch(() => undefined);
      await Promise.all(readers.map((reader) => reader.close()));
    }
  }, 30_000);
}
