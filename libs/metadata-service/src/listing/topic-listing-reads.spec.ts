import type { ChildrenOptions, ChildrenPage, MetadataStore } from '@ledgerline/metadata-store';
import { managedLedgerPath, NamespaceName, TopicName } from '@ledgerline/naming';
import { ListingCache } from './listing-cache.js';
import { listTopicPage, type TopicPage } from './topic-listing.js';

/**
 * The one store call a listing makes (children), over sorted names in memory:
 * it counts the reads, and answers each a turn of the event loop later so that
 * a test can act while a page's read-ahead is in flight. A fake of our own
 * store interface, so that a listing of a few hundred thousand topics takes
 * no time to set up.
 */
class DirectoryStore {
  readonly #dirs = new Map<string, string[]>();
  reads = 0;
  /** While set, reads that are answered fail, as when the store is unreachable. */
  failing = false;
  failures = 0;

  add(topic: TopicName, buckets: number): void {
    const path = managedLedgerPath(topic, buckets);
    const slash = path.lastIndexOf('/');
    const dir = path.slice(0, slash);
    const name = path.slice(slash + 1);
    const names = this.#dirs.get(dir) ?? [];
    this.#dirs.set(dir, names);
    names.splice(this.#after(names, name), 0, name);
  }

  async children(path: string, options: ChildrenOptions = {}): Promise<ChildrenPage> {
    this.reads++;
    await new Promise(setImmediate);
    if (this.failing) {
      this.failures++;
      throw new Error('the store is unreachable');
    }
    const all = this.#dirs.get(path) ?? [];
    const start = options.after === undefined ? 0 : this.#after(all, options.after);
    const names = all.slice(start, start + (options.limit ?? 1000));
    return start + names.length < all.length ? { names, next: names.at(-1)! } : { names };
  }

  /** The index of the first name after `name`. */
  #after(names: string[], name: string): number {
    let low = 0;
    let high = names.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (names[middle]! <= name) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

const namespace = NamespaceName.parse('reads/ns');

function topicsNamed(locals: string[], store: DirectoryStore, buckets: number): void {
  for (const local of locals) store.add(TopicName.inNamespace(namespace, local), buckets);
}

function local(index: number): string {
  return `t-${String(index).padStart(6, '0')}`;
}

interface Listed {
  topics: string[];
  readsPerPage: number[];
}

/** Pages through the namespace; `betweenPages` runs after each page, while its read-ahead may be in flight. */
async function listAll(
  store: DirectoryStore,
  buckets: number,
  pageSize: number,
  cache: ListingCache | undefined,
  betweenPages: () => Promise<void> = async () => {},
): Promise<Listed> {
  const listed: Listed = { topics: [], readsPerPage: [] };
  let pageToken = '';
  do {
    const readsBefore = store.reads;
    const page: TopicPage = await listTopicPage(
      store as unknown as MetadataStore,
      { storageNamespace: namespace, buckets, displayNamespace: namespace, pageToken, pageSize },
      cache,
    );
    listed.readsPerPage.push(store.reads - readsBefore);
    listed.topics.push(...page.topics);
    pageToken = page.nextPageToken;
    await betweenPages();
  } while (pageToken !== '');
  return listed;
}

const shown = (locals: string[]) => locals.map((name) => `persistent://reads/ns/${name}`);

describe('store reads of a topic listing', () => {
  it('costs a few reads a page through a long listing of 64 buckets, not one read per bucket every few pages', async () => {
    const store = new DirectoryStore();
    const locals = Array.from({ length: 200_000 }, (_, index) => local(index));
    topicsNamed(locals, store, 64);
    const { topics, readsPerPage } = await listAll(store, 64, 1000, new ListingCache());
    expect(topics).toEqual(shown(locals));
    expect(readsPerPage).toHaveLength(200);
    // The first page must learn every bucket's head; after it, reads grow to 500 names a bucket.
    expect(readsPerPage[0]).toBeLessThanOrEqual(64 + 1 + 64);
    const later = readsPerPage.slice(1);
    // Reads of 71 names, refilled every page or two, cost 14 reads a page.
    expect(later.reduce((sum, reads) => sum + reads, 0) / later.length).toBeLessThan(4);
  });

  it('still lists every topic once, in order, when every read-ahead fails', async () => {
    const store = new DirectoryStore();
    const locals = Array.from({ length: 5_000 }, (_, index) => local(index));
    topicsNamed(locals, store, 8);
    const { topics } = await listAll(store, 8, 100, new ListingCache(), async () => {
      // The page's read-ahead is waiting for its answers: they fail; the next page reads those buckets itself.
      store.failing = true;
      await new Promise(setImmediate);
      store.failing = false;
    });
    expect(store.failures).toBeGreaterThan(0);
    expect(topics).toEqual(shown(locals));
  });

  it('lists every topic that existed throughout exactly once, in order, while topics are created between pages', async () => {
    for (const cache of [new ListingCache(), undefined]) {
      const store = new DirectoryStore();
      const before = Array.from({ length: 20_000 }, (_, index) => local(2 * index));
      topicsNamed(before, store, 64);
      const created = new Set<string>();
      const { topics } = await listAll(store, 64, 500, cache, async () => {
        // Odd numbers land between listed names, behind and ahead of where the listing stands.
        const batch = Array.from({ length: 200 }, (_, index) =>
          local(((created.size + index) * 7919 * 2 + 1) % 40_000),
        );
        const fresh = [...new Set(batch)].filter((name) => !created.has(name));
        for (const name of fresh) created.add(name);
        topicsNamed(fresh, store, 64);
      });
      const listed = new Set(topics);
      expect(listed.size).toBe(topics.length);
      expect([...topics].sort()).toEqual(topics);
      expect(shown(before).filter((topic) => !listed.has(topic))).toEqual([]);
    }
  });
});
