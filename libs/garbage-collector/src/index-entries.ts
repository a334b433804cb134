import {
  decodePendingDeletionEntry,
  pendingDeletionShardDir,
  type PendingDeletionEntry,
} from '@ledgerline/ledger-info';
import type { CollectorContext, PassCounts } from './collector-context.js';
import { isBadVersionError } from './errors.js';
import { forEachBounded } from './bounded-pool.js';
import { collectManagedLedger } from './managed-ledger-collection.js';

/** Index entries listed per page. */
const INDEX_PAGE = 1_000;

interface Sighting {
  version: number;
  /** This process's monotonic clock when the version was first seen. */
  seenAtMs: number;
}

/**
 * Works through index shards: each entry names a managed ledger with markers
 * (or had some). An entry whose managed ledger holds no marker any more is
 * removed by compare-and-set on the entry's version, and only once it has
 * stayed unchanged for indexSettleMs: a writer rewrites the entry before each
 * marking write, so an entry that changed recently may be about to get a
 * marker. A removed or re-created topic's entry goes at once.
 */
export class IndexWalker {
  private readonly sightings = new Map<string, Sighting>();

  constructor(
    private readonly ctx: CollectorContext,
    private readonly monotonicNow: () => number = () => performance.now(),
  ) {}

  /**
   * Every entry of the shards, `managedLedgerConcurrency` managed ledgers at
   * a time across all of them (a shard holds few entries when little is
   * pending, and waiting for each shard to finish would idle most workers).
   */
  async walkShards(shards: readonly number[], counts: PassCounts): Promise<void> {
    await forEachBounded(this.entryPaths(shards), this.ctx.config.managedLedgerConcurrency, (entryPath) =>
      this.collectEntry(entryPath, counts),
    );
    const known = new Set<string>();
    for (const shard of shards) known.add(pendingDeletionShardDir(shard));
    for (const path of [...this.sightings.keys()]) {
      if (!known.has(path.slice(0, path.lastIndexOf('/')))) this.sightings.delete(path);
    }
  }

  /** The entries of the shards, listed one page (INDEX_PAGE) at a time as the walk reaches it. */
  private async *entryPaths(shards: readonly number[]): AsyncGenerator<string> {
    for (const shard of shards) {
      const dir = pendingDeletionShardDir(shard);
      let after: string | undefined;
      do {
        const page = await this.ctx.metadata.children(dir, after, INDEX_PAGE);
        for (const name of page.names) yield `${dir}/${name}`;
        after = page.next;
      } while (after !== undefined);
    }
  }

  /** Collects the managed ledger an entry names, then drops the entry when it is stale. */
  async collectEntry(entryPath: string, counts: PassCounts): Promise<void> {
    const node = await this.ctx.metadata.get(entryPath);
    if (node === undefined) {
      this.sightings.delete(entryPath);
      return;
    }
    let entry: PendingDeletionEntry;
    try {
      entry = decodePendingDeletionEntry(node.value);
    } catch (error) {
      // Nothing we wrote: leave it for a person rather than guess which managed ledger it meant.
      this.ctx.logger.error(
        { entry: entryPath, error: String(error) },
        'pending-deletions index entry does not decode',
      );
      return;
    }
    const outcome = await this.collectLogged(entry.managedLedgerPath, counts);
    if (outcome === undefined || outcome === 'pending') return;
    if (outcome === 'no-markers' && !this.settled(entryPath, node.version)) return;
    try {
      await this.ctx.metadata.delete(entryPath, node.version);
      counts.indexEntriesRemoved++;
    } catch (error) {
      if (!isBadVersionError(error)) throw error;
    }
    this.sightings.delete(entryPath);
  }

  private async collectLogged(path: string, counts: PassCounts) {
    try {
      return await collectManagedLedger(this.ctx, path, counts);
    } catch (error) {
      counts.failures++;
      this.ctx.logger.warn(
        { managedLedger: path, error: String(error) },
        'collecting a managed ledger failed; retried next pass',
      );
      return undefined;
    }
  }

  private settled(entryPath: string, version: number): boolean {
    const now = this.monotonicNow();
    const seen = this.sightings.get(entryPath);
    if (seen === undefined || seen.version !== version) {
      this.sightings.set(entryPath, { version, seenAtMs: now });
      return this.ctx.config.indexSettleMs === 0;
    }
    return now - seen.seenAtMs >= this.ctx.config.indexSettleMs;
  }
}
