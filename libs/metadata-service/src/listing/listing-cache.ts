import { LISTING_CACHE_MAX_LISTINGS, LISTING_CACHE_MAX_NAMES, LISTING_CACHE_TTL_MS } from '../limits.js';
import type { ListingBuffers } from './page-merge.js';

/**
 * The read-ahead of listings in progress, by the token that continues them,
 * so that the next page starts from what this one read past instead of
 * reading every bucket again: with many buckets a page that keeps nothing
 * reads every bucket for a few names each (65 store reads per 1000-name page
 * with 64 buckets). A token is the whole truth of where a listing stands; the
 * cache only saves reads, so a page whose token is not here (another replica
 * served the last page, it was evicted, or it expired) reads the store as
 * before. Buffered names are at most LISTING_CACHE_TTL_MS old: a topic created
 * or deleted meanwhile inside a range already read may be missed or still
 * listed, as with any paged listing that is not a snapshot.
 */
export class ListingCache {
  readonly #entries = new Map<string, { buffers: ListingBuffers; expiresAt: number }>();
  #names = 0;

  constructor(
    private readonly maxNames = LISTING_CACHE_MAX_NAMES,
    private readonly ttlMs = LISTING_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
    private readonly maxListings = LISTING_CACHE_MAX_LISTINGS,
  ) {}

  take(key: string): ListingBuffers | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#drop(key);
    return entry.expiresAt > this.now() ? entry.buffers : undefined;
  }

  keep(key: string, buffers: ListingBuffers): void {
    if (buffers.names > this.maxNames) return;
    this.#drop(key);
    const now = this.now();
    for (const [oldest, entry] of this.#entries) {
      const room = this.#names + buffers.names <= this.maxNames && this.#entries.size < this.maxListings;
      if (room && entry.expiresAt > now) break;
      this.#drop(oldest);
    }
    this.#entries.set(key, { buffers, expiresAt: now + this.ttlMs });
    this.#names += buffers.names;
  }

  /** Listings held, for tests. */
  get size(): number {
    return this.#entries.size;
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#names -= entry.buffers.names;
  }
}
