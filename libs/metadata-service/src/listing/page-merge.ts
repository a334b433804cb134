import type { MetadataStore } from '@ledgerline/metadata-store';
import { MAX_CHILDREN_PAGE } from '@ledgerline/metadata-store';
import { HeadHeap } from './head-heap.js';
import { MAX_LIST_CALLS_PER_PAGE, MAX_LIST_WAVES_PER_PAGE, MAX_LISTING_READ_AHEAD_NAMES } from '../limits.js';
import type { BucketHead } from './page-token.js';

export const MAX_VERIFICATIONS_PER_PAGE = 32;

const BEFORE_EVERY_TOPIC = '$~';

interface BucketRun {
  head: BucketHead;
  buffer: string[];
  position: number;
  more: boolean;
  /** How many names this bucket's next read asks for. */
  readSize: number;
}

/** Deletion markers after `last`, read alongside the buckets. */
interface MarkerRun {
  names: Set<string>;
  through: string | undefined;
  exhausted: boolean;
}

/** What one page read beyond what it handed out: each bucket's run and the deletion markers. */
export interface MergeBuffers {
  runs: BucketRun[];
  markers: MarkerRun | undefined;
  /** Store reads and rounds of them already spent on the next page (its read-ahead). */
  reads: number;
  rounds: number;
}

/** What one page read beyond what it handed out, once its read-ahead has settled, and the most names that may be. */
export interface ListingBuffers {
  ready: Promise<MergeBuffers>;
  names: number;
}

export interface MergeInput {
  /** One directory per bucket. */
  dirs: string[];
  markerDir: string;
  pageSize: number;
  last: string | undefined;
  heads: BucketHead[];
  /** The previous page's read-ahead, when this instance served it. */
  cached: MergeBuffers | undefined;
  /** True when what this page reads past its end is kept for the next page. */
  readAhead: boolean;
}

/**
 * How many names one bucket read asks for. The first read of a bucket asks
 * for about twice its share of a page (four times when the read-ahead is
 * kept). When it is kept, each refill of a bucket asks for twice the last, up
 * to an even split of MAX_LISTING_READ_AHEAD_NAMES over the buckets and at
 * most four pages: a listing that stops after a page or two reads little more
 * than it shows, and a long one reads each bucket in a few large reads
 * instead of a small read every page or two (64 buckets, pages of 1000: 500
 * names a read, about 2 reads a page, where reads of 71 names cost 14).
 */
export function bucketReadSizes(
  pageSize: number,
  buckets: number,
  readAhead: boolean,
): { first: number; most: number } {
  const shares = readAhead ? 4 : 2;
  const first = Math.min(MAX_CHILDREN_PAGE, pageSize + 1, Math.max(16, Math.ceil((shares * pageSize) / buckets) + 8));
  if (!readAhead) return { first, most: first };
  const split = Math.floor(MAX_LISTING_READ_AHEAD_NAMES / buckets);
  return { first, most: Math.max(first, Math.min(split, 4 * pageSize, MAX_CHILDREN_PAGE)) };
}

/**
 * One page of the k-way merge over a namespace's buckets (topic-listing.ts
 * describes the listing and its bounds). Each bucket is a run: its head (its
 * next name, when known) and a buffer of the names read after it.
 */
export class PageMerge {
  readonly #store: MetadataStore;
  readonly #dirs: string[];
  readonly #markerDir: string;
  readonly #pageSize: number;
  readonly #mostRead: number;
  /** Fewer names left than this in a bucket's buffer and the next round refills it. */
  readonly #lowWater: number;
  readonly #runs: BucketRun[];
  readonly #heap = new HeadHeap();
  #unknown = 0;
  #markers: MarkerRun | undefined;
  #calls = 0;
  #waves = 0;
  last: string | undefined;
  readonly markedForCheck = new Set<string>();

  constructor(store: MetadataStore, input: MergeInput) {
    this.#store = store;
    this.#dirs = input.dirs;
    this.#markerDir = input.markerDir;
    this.#pageSize = input.pageSize;
    const buckets = input.dirs.length;
    const sizes = bucketReadSizes(input.pageSize, buckets, input.readAhead);
    this.#mostRead = sizes.most;
    this.#lowWater = Math.ceil((2 * input.pageSize) / buckets) + 1;
    const cached = input.cached;
    this.#runs =
      cached !== undefined && cached.runs.length === input.heads.length
        ? cached.runs
        : input.heads.map((head) => ({ head, buffer: [], position: 0, more: true, readSize: sizes.first }));
    this.#markers = cached?.markers;
    this.#calls = cached?.reads ?? 0;
    this.#waves = cached?.rounds ?? 0;
    this.last = input.last;
    this.#runs.forEach((run, bucket) => {
      if (run.head.kind === 'at') this.#heap.push(bucket, run.head.name);
      else if (run.head.kind === 'unknown') this.#unknown++;
    });
  }

  /** What this page read and did not hand out, for the next page, and how many names that is. */
  buffers(): MergeBuffers & { names: number } {
    const names =
      this.#runs.reduce((sum, run) => sum + run.buffer.length - run.position, 0) + (this.#markers?.names.size ?? 0);
    return { runs: this.#runs, markers: this.#markers, reads: this.#calls, rounds: this.#waves, names };
  }

  heads(): BucketHead[] {
    return this.#runs.map((run) => run.head);
  }

  finished(): boolean {
    return this.#heap.size === 0 && this.#unknown === 0;
  }

  async run(): Promise<string[]> {
    const out: string[] = [];
    // One round up front refills every bucket that may run dry within this page, so that a page
    // usually costs that one round rather than one more each time a bucket runs out mid-page.
    await this.#wave();
    while (out.length < this.#pageSize && this.markedForCheck.size < MAX_VERIFICATIONS_PER_PAGE) {
      if (this.#unknown > 0) {
        if (!(await this.#wave())) break;
        continue;
      }
      const bucket = this.#heap.topBucket();
      if (bucket === -1) break;
      const name = this.#heap.topName();
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

  /** Moves the bucket on top of the heap past the name just handed out. */
  #advance(bucket: number): void {
    const run = this.#runs[bucket]!;
    if (run.position < run.buffer.length) {
      const name = run.buffer[run.position++]!;
      run.head = { kind: 'at', name };
      this.#heap.replaceTop(name);
      return;
    }
    this.#heap.popTop();
    run.head = run.more ? { kind: 'unknown' } : { kind: 'done' };
    if (run.more) this.#unknown++;
  }

  #isMarked(name: string): boolean | 'unknown' {
    const markers = this.#markers;
    if (markers === undefined) return 'unknown';
    if (markers.names.has(name)) return true;
    return markers.exhausted || (markers.through !== undefined && name <= markers.through) ? false : 'unknown';
  }

  /**
   * Starts the next page's first round of reads now, so that they overlap
   * this page's reply instead of delaying the next page, and returns what
   * the next page may start from once they have settled (it never rejects: a
   * read that failed left its bucket as it was, and the next page reads it
   * again) with a bound on the names it will hold. The round has the next
   * page's budget, which its page then does not spend again (its own first
   * round finds nothing left to read).
   */
  readAhead(): ListingBuffers {
    this.#calls = 0;
    this.#waves = 0;
    const round = this.#planRound();
    const held = this.buffers().names;
    if (round === undefined) return { ready: Promise.resolve(this.buffers()), names: held };
    const names =
      held +
      round.buckets.reduce((sum, bucket) => sum + this.#runs[bucket]!.readSize, 0) +
      (round.markers ? this.#markerLimit() : 0);
    const ready = this.#readRound(round).then(
      () => this.buffers(),
      () => this.buffers(),
    );
    return { ready, names };
  }

  /** One round of concurrent reads (#planRound); false when there is nothing to read or the budget allows no further round. */
  async #wave(): Promise<boolean> {
    const round = this.#planRound();
    if (round === undefined) return false;
    await this.#readRound(round);
    return true;
  }

  /**
   * The next round: every bucket whose head is unknown, the deletion markers
   * when they do not reach far enough, and as prefetch the buckets that may
   * run dry within a page, smallest head first, within the budget, which the
   * plan takes from.
   */
  #planRound(): { buckets: number[]; markers: boolean } | undefined {
    const markerCalls = this.#markers === undefined || (!this.#markers.exhausted && this.#markerShort()) ? 1 : 0;
    const room = MAX_LIST_CALLS_PER_PAGE - this.#calls - markerCalls;
    if (this.#waves >= MAX_LIST_WAVES_PER_PAGE || room < 0) return undefined;
    // With more buckets than the budget, a page learns some heads and the token carries them to the next page.
    const unknown = this.#bucketsWhere((run) => run.head.kind === 'unknown').slice(0, room);
    const prefetch = this.#bucketsWhere(
      (run) => run.head.kind === 'at' && run.buffer.length - run.position < this.#lowWater && run.more,
    )
      .sort((a, b) => (this.#headName(a) < this.#headName(b) ? -1 : 1))
      .slice(0, room - unknown.length);
    const buckets = [...unknown, ...prefetch];
    if (buckets.length + markerCalls === 0) return undefined;
    this.#waves++;
    this.#calls += buckets.length + markerCalls;
    return { buckets, markers: markerCalls === 1 };
  }

  /** Every read of a round settles before it returns or throws, so none changes a run after it. */
  async #readRound(round: { buckets: number[]; markers: boolean }): Promise<void> {
    const settled = await Promise.allSettled([
      ...round.buckets.map((bucket) => this.#fetchBucket(bucket)),
      round.markers ? this.#fetchMarkers() : undefined,
    ]);
    for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  }

  #markerLimit(): number {
    return Math.min(MAX_CHILDREN_PAGE, this.#pageSize + 1);
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
    const page = await this.#store.children(this.#dirs[bucket]!, { limit: run.readSize, after });
    run.readSize = Math.min(this.#mostRead, run.readSize * 2);
    const names = page.names;
    run.more = page.next !== undefined && names.length > 0;
    if (run.head.kind === 'at') {
      run.buffer = held.length === 0 ? names : held.concat(names);
      run.position = 0;
      return;
    }
    this.#unknown--;
    run.buffer = names;
    run.position = Math.min(1, names.length);
    if (names.length > 0) {
      run.head = { kind: 'at', name: names[0]! };
      this.#heap.push(bucket, names[0]!);
    } else {
      run.head = run.more ? { kind: 'unknown' } : { kind: 'done' };
      if (run.more) this.#unknown++;
    }
  }

  async #fetchMarkers(): Promise<void> {
    const after = this.#markers?.through ?? this.last;
    const page = await this.#store.children(this.#markerDir, {
      limit: this.#markerLimit(),
      ...(after === undefined ? {} : { after }),
    });
    const markers = this.#markers ?? { names: new Set<string>(), through: undefined, exhausted: false };
    for (const name of page.names) markers.names.add(name);
    markers.through = page.names.length > 0 ? page.names[page.names.length - 1] : markers.through;
    markers.exhausted = page.next === undefined || page.names.length === 0;
    this.#markers = markers;
  }
}
