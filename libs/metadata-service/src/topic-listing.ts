import type { MetadataStore } from '@ledgerline/metadata-store';
import { MAX_CHILDREN_PAGE } from '@ledgerline/metadata-store';
import {
  decodeLocalName,
  managedLedgerPath,
  TopicName,
  topicListingPaths,
  type NamespaceName,
} from '@ledgerline/naming';
import { invalidArgument } from '@ledgerline/errors';
import { deletingTopicsDir } from './layout.js';
import {
  DEFAULT_TOPIC_PAGE,
  LISTING_CACHE_MAX_NAMES,
  LISTING_CACHE_TTL_MS,
  MAX_LIST_CALLS_PER_PAGE,
  MAX_LIST_WAVES_PER_PAGE,
  MAX_TOPIC_PAGE,
} from './limits.js';
import { readLiveManagedLedger } from './managed-ledger-nodes.js';
import { decodePageToken, encodePageToken, initialListingState, type BucketHead } from './page-token.js';
import { MetadataServiceReason } from './errors.js';

/**
 * Lists a namespace's topics across all its buckets, sorted by encoded local
 * name (the store's byte order; for names of letters, digits and `.-_*` this
 * is the plain name order), one page at a time.
 *
 * It is a k-way merge whose state travels in the page token (see
 * page-token.ts). Cost bound per page, whatever the bucket count:
 *   - at most MAX_LIST_WAVES_PER_PAGE rounds of concurrent store reads,
 *   - at most MAX_LIST_CALLS_PER_PAGE children reads in all (buckets and the
 *     deleted-topic markers), plus at most MAX_VERIFICATIONS_PER_PAGE node reads
 *     in one final round, to check topics that carry a deletion marker.
 * A page that would need more ends early with a token, so pages may be
 * shorter than asked (with many buckets the first may even be empty); a page
 * without a token is the last. Each bucket read asks for about twice its
 * share of a page, so one round usually fills it.
 */
export interface TopicPage {
  /** Full topic names, `persistent://<namespace>/<local>`. */
  topics: string[];
  /** '' after the last page. */
  nextPageToken: string;
}

export interface ListingRequest {
  /** The namespace whose buckets hold the topics (a reader namespace lists its writer's). */
  storageNamespace: NamespaceName;
  buckets: number;
  /** The namespace the names are shown in. */
  displayNamespace: NamespaceName;
  pageToken: string;
  pageSize: number;
}

export const MAX_VERIFICATIONS_PER_PAGE = 32;

const BEFORE_EVERY_TOPIC = '$~';

export interface BucketRun {
  head: BucketHead;
  buffer: string[];
  position: number;
  more: boolean;
}

/** Deletion markers after `last`, read alongside the buckets. */
export interface MarkerRun {
  names: Set<string>;
  through: string | undefined;
  exhausted: boolean;
}

export function normalisePageSize(pageSize: number): number {
  if (pageSize === 0) return DEFAULT_TOPIC_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_TOPIC_PAGE) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_PAGE_SIZE,
      `page size must be 0 (default ${DEFAULT_TOPIC_PAGE}) to ${MAX_TOPIC_PAGE}, got ${pageSize}`,
    );
  }
  return pageSize;
}

export async function listTopicPage(
  store: MetadataStore,
  request: ListingRequest,
  cache?: ListingCache,
): Promise<TopicPage> {
  const pageSize = normalisePageSize(request.pageSize);
  const scope = request.storageNamespace.toString();
  const state =
    request.pageToken === ''
      ? initialListingState(request.buckets)
      : decodePageToken(request.pageToken, scope, request.buckets);
  const cached = request.pageToken === '' ? undefined : cache?.take(`${scope}\n${request.pageToken}`);
  const merge = new PageMerge(store, request, pageSize, state.last, state.heads, cached, cache !== undefined);
  const names = await merge.run();
  const kept = await verifyMarked(store, request, names, merge.markedForCheck);
  const finished = merge.finished();
  const nextPageToken = finished ? '' : encodePageToken(scope, { last: merge.last, heads: merge.heads() });
  if (nextPageToken !== '') cache?.keep(`${scope}\n${nextPageToken}`, merge.buffers());
  return {
    topics: kept.map((encoded) => `persistent://${request.displayNamespace.toString()}/${decodeLocalName(encoded)}`),
    nextPageToken,
  };
}

/** What one page read beyond what it handed out: each bucket's run and the deletion markers. */
export interface ListingBuffers {
  runs: BucketRun[];
  markers: MarkerRun | undefined;
  names: number;
}

/**
 * The read-ahead of listings in progress, by the token that continues them,
 * so that the next page starts from what this one read past instead of
 * reading every bucket again: with many buckets each read brings only a few
 * names per page (65 store reads per 1000-name page with 64 buckets). A token
 * is the whole truth of where a listing stands; the cache only saves reads,
 * so a page whose token is not here (another replica served the last page, it
 * was evicted, or it expired) reads the store as before. Buffered names are at
 * most LISTING_CACHE_TTL_MS old: a topic created or deleted meanwhile inside a
 * range already read may be missed or still listed, as with any paged listing
 * that is not a snapshot.
 */
export class ListingCache {
  readonly #entries = new Map<string, { buffers: ListingBuffers; expiresAt: number }>();
  #names = 0;

  constructor(
    private readonly maxNames = LISTING_CACHE_MAX_NAMES,
    private readonly ttlMs = LISTING_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
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
      if (this.#names + buffers.names <= this.maxNames && entry.expiresAt > now) break;
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

class PageMerge {
  readonly #store: MetadataStore;
  readonly #dirs: string[];
  readonly #markerDir: string;
  readonly #pageSize: number;
  readonly #chunk: number;
  /** Fewer names left than this in a bucket's buffer and the next round refills it. */
  readonly #lowWater: number;
  readonly #runs: BucketRun[];
  #markers: MarkerRun | undefined;
  #calls = 0;
  #waves = 0;
  last: string | undefined;
  readonly markedForCheck = new Set<string>();

  constructor(
    store: MetadataStore,
    request: ListingRequest,
    pageSize: number,
    last: string | undefined,
    heads: BucketHead[],
    cached: ListingBuffers | undefined,
    readAhead: boolean,
  ) {
    this.#store = store;
    this.#dirs = topicListingPaths(request.storageNamespace, request.buckets);
    this.#markerDir = deletingTopicsDir(request.storageNamespace);
    this.#pageSize = pageSize;
    // Each bucket read asks for about twice its share of a page, or four times when what it reads past
    // the page is kept for the next one.
    const shares = readAhead ? 4 : 2;
    this.#chunk = Math.min(
      MAX_CHILDREN_PAGE,
      pageSize + 1,
      Math.max(16, Math.ceil((shares * pageSize) / request.buckets) + 8),
    );
    this.#lowWater = Math.ceil((2 * pageSize) / request.buckets) + 1;
    this.#runs =
      cached !== undefined && cached.runs.length === heads.length
        ? cached.runs
        : heads.map((head) => ({ head, buffer: [], position: 0, more: true }));
    this.#markers = cached?.markers;
    this.last = last;
  }

  /** What this page read and did not hand out, for the next page. */
  buffers(): ListingBuffers {
    const names =
      this.#runs.reduce((sum, run) => sum + run.buffer.length - run.position, 0) + (this.#markers?.names.size ?? 0);
    return { runs: this.#runs, markers: this.#markers, names };
  }

  heads(): BucketHead[] {
    return this.#runs.map((run) => run.head);
  }

  finished(): boolean {
    return this.#runs.every((run) => run.head.kind === 'done');
  }

  async run(): Promise<string[]> {
    const out: string[] = [];
    while (out.length < this.#pageSize && this.markedForCheck.size < MAX_VERIFICATIONS_PER_PAGE) {
      if (this.#runs.some((run) => run.head.kind === 'unknown')) {
        if (!(await this.#wave())) break;
        continue;
      }
      const bucket = this.#smallestHead();
      if (bucket === -1) break;
      const name = (this.#runs[bucket]!.head as { name: string }).name;
      const marked = this.#isMarked(name);
      if (marked === 'unknown') {
        if (!(await this.#wave())) break;
        continue;
      }
      out.push(name);
      if (marked) this.markedForCheck.add(name);
      this.last = name;
      this.#advance(bucket);
    }
    return out;
  }

  #smallestHead(): number {
    let best = -1;
    let bestName = '';
    this.#runs.forEach((run, bucket) => {
      if (run.head.kind === 'at' && (best === -1 || run.head.name < bestName)) {
        best = bucket;
        bestName = run.head.name;
      }
    });
    return best;
  }

  #advance(bucket: number): void {
    const run = this.#runs[bucket]!;
    if (run.position < run.buffer.length) run.head = { kind: 'at', name: run.buffer[run.position++]! };
    else run.head = run.more ? { kind: 'unknown' } : { kind: 'done' };
  }

  #isMarked(name: string): boolean | 'unknown' {
    const markers = this.#markers;
    if (markers === undefined) return 'unknown';
    if (markers.names.has(name)) return true;
    return markers.exhausted || (markers.through !== undefined && name <= markers.through) ? false : 'unknown';
  }

  /**
   * One round of concurrent reads: every bucket whose head is unknown, the
   * deletion markers when they do not reach far enough, and as prefetch the
   * buckets whose buffers are empty, smallest head first, within the budget.
   * Returns false when the budget allows no further round.
   */
  async #wave(): Promise<boolean> {
    const markerCalls = this.#markers === undefined || (!this.#markers.exhausted && this.#markerShort()) ? 1 : 0;
    const room = MAX_LIST_CALLS_PER_PAGE - this.#calls - markerCalls;
    if (this.#waves >= MAX_LIST_WAVES_PER_PAGE || room < 0) return false;
    // With more buckets than the budget, a page learns some heads and the token carries them to the next page.
    const unknown = this.#bucketsWhere((run) => run.head.kind === 'unknown').slice(0, room);
    // Prefetch refills every bucket that may run dry within this page, so a page kept from the last one
    // (whose buckets are left with different amounts) still needs one round, not one per bucket that runs out.
    const prefetch = this.#bucketsWhere(
      (run) => run.head.kind === 'at' && run.buffer.length - run.position < this.#lowWater && run.more,
    )
      .sort((a, b) => (this.#headName(a) < this.#headName(b) ? -1 : 1))
      .slice(0, room - unknown.length);
    const fetches = [...unknown, ...prefetch];
    if (fetches.length + markerCalls === 0) return false;
    this.#waves++;
    this.#calls += fetches.length + markerCalls;
    await Promise.all([
      ...fetches.map((bucket) => this.#fetchBucket(bucket)),
      markerCalls === 1 ? this.#fetchMarkers() : undefined,
    ]);
    return true;
  }

  #headName(bucket: number): string {
    return (this.#runs[bucket]!.head as { name: string }).name;
  }

  #bucketsWhere(test: (run: BucketRun) => boolean): number[] {
    const buckets: number[] = [];
    this.#runs.forEach((run, bucket) => {
      if (test(run)) buckets.push(bucket);
    });
    return buckets;
  }

  #markerShort(): boolean {
    const through = this.#markers?.through;
    return this.#runs.some((run) => run.head.kind === 'at' && (through === undefined || run.head.name > through));
  }

  async #fetchBucket(bucket: number): Promise<void> {
    const run = this.#runs[bucket]!;
    // Encoded names never start with `$` (it is always %-encoded), and `$<digits>` sorts before every
    // encoded name, so starting after `$~` skips any bucket directory that sits beside unbucketed topics.
    // A bucket refilled before it ran dry keeps what it still holds and reads on after it.
    const held = run.head.kind === 'at' ? run.buffer.slice(run.position) : [];
    const after = run.head.kind === 'at' ? (held.at(-1) ?? run.head.name) : (this.last ?? BEFORE_EVERY_TOPIC);
    const page = await this.#store.children(this.#dirs[bucket]!, { limit: this.#chunk, after });
    const names = page.names;
    const more = page.next !== undefined && page.names.length > 0;
    if (run.head.kind === 'at') {
      run.buffer = held.length === 0 ? names : [...held, ...names];
    } else if (names.length > 0) {
      run.head = { kind: 'at', name: names[0]! };
      run.buffer = names.slice(1);
    } else {
      run.head = more ? { kind: 'unknown' } : { kind: 'done' };
      run.buffer = [];
    }
    run.position = 0;
    run.more = more;
  }

  async #fetchMarkers(): Promise<void> {
    const after = this.#markers?.through ?? this.last;
    const page = await this.#store.children(this.#markerDir, {
      limit: Math.min(MAX_CHILDREN_PAGE, this.#pageSize + 1),
      ...(after === undefined ? {} : { after }),
    });
    const markers = this.#markers ?? { names: new Set<string>(), through: undefined, exhausted: false };
    for (const name of page.names) markers.names.add(name);
    markers.through = page.names.length > 0 ? page.names[page.names.length - 1] : markers.through;
    markers.exhausted = page.next === undefined || page.names.length === 0;
    this.#markers = markers;
  }
}

/**
 * A deletion marker is a hint written before a topic is marked DELETING; the
 * node's state is the truth. Marked names are read once (one round) and kept
 * only when the node is still live, so a marker left by an interrupted delete
 * never hides a live topic.
 */
async function verifyMarked(store: MetadataStore, request: ListingRequest, names: string[], marked: Set<string>) {
  if (marked.size === 0) return names;
  const live = new Set<string>();
  await Promise.all(
    [...marked].map(async (encoded) => {
      const topic = TopicName.inNamespace(request.storageNamespace, decodeLocalName(encoded));
      if ((await readLiveManagedLedger(store, managedLedgerPath(topic, request.buckets))) !== undefined)
        live.add(encoded);
    }),
  );
  return names.filter((name) => !marked.has(name) || live.has(name));
}
