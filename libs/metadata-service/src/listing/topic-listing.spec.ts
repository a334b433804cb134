import fc from 'fast-check';
import { create, toBinary } from '@bufbuild/protobuf';
import { encodeLocalName } from '@ledgerline/naming';
import { ManagedLedgerInfoSchema, ManagedLedgerState } from '@ledgerline/proto';
import { MAX_PAGE_TOKEN_BYTES } from '../limits.js';
import { sqliteFixture, type SqliteFixture } from '../testing/spec-support.js';
import type { MetadataAdmin } from '../metadata-admin.js';
import type { MetadataStore } from '@ledgerline/metadata-store';
import { NamespaceName } from '@ledgerline/naming';
import { ListingCache } from './listing-cache.js';
import { listTopicPage } from './topic-listing.js';

/** The store, counting its children reads. */
function counting(inner: MetadataStore): { store: MetadataStore; reads: () => number } {
  let reads = 0;
  const store = Object.create(inner) as MetadataStore;
  store.children = (path, options) => {
    reads++;
    return inner.children(path, options);
  };
  return { store, reads: () => reads };
}

/** Every page of a namespace through listTopicPage, `cacheFor(page)` choosing the cache each page uses. */
async function pages(
  store: MetadataStore,
  namespace: string,
  buckets: number,
  pageSize: number,
  cacheFor: (page: number) => ListingCache | undefined,
): Promise<string[]> {
  const name = NamespaceName.parse(namespace);
  const topics: string[] = [];
  let pageToken = '';
  for (let page = 0; page === 0 || pageToken !== ''; page++) {
    const request = { storageNamespace: name, buckets, displayNamespace: name, pageToken, pageSize };
    const answer = await listTopicPage(store, request, cacheFor(page));
    topics.push(...answer.topics);
    pageToken = answer.nextPageToken;
  }
  return topics;
}

async function listAll(
  admin: MetadataAdmin,
  namespace: string,
  pageSize: number,
): Promise<{ topics: string[]; pages: number }> {
  const topics: string[] = [];
  let token = '';
  let pages = 0;
  do {
    const page = await admin.listTopics(namespace, token, pageSize);
    expect(page.topics.length).toBeLessThanOrEqual(pageSize);
    expect(page.nextPageToken.length).toBeLessThanOrEqual(MAX_PAGE_TOKEN_BYTES);
    topics.push(...page.topics);
    token = page.nextPageToken;
    pages++;
  } while (token !== '' && pages < 10_000);
  return { topics, pages };
}

/** The order listings promise: the store's byte order of the encoded local names. */
function expectedOrder(namespace: string, locals: Iterable<string>): string[] {
  return [...locals]
    .map((local) => ({ local, key: encodeLocalName(local) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ local }) => `persistent://${namespace}/${local}`);
}

describe('topic listing across buckets', () => {
  let fixture: SqliteFixture;
  beforeAll(async () => {
    fixture = sqliteFixture({ recountSettleMs: 0 });
    await fixture.admin.createTenant('prop');
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('lists exactly the live topics, in order, whatever the buckets, names, page size and deletions', async () => {
    let run = 0;
    const localName = fc.string({
      minLength: 1,
      maxLength: 12,
      unit: fc.constantFrom('a', 'b', 'Z', '0', '9', '.', '-', '_', '*', ' ', '%', '$', 'é', '😀'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          { arbitrary: fc.integer({ min: 1, max: 40 }), weight: 4 },
          { arbitrary: fc.integer({ min: 129, max: 300 }), weight: 1 },
        ),
        fc.uniqueArray(localName, { minLength: 0, maxLength: 60 }),
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        async (buckets, locals, pageSize, deletions) => {
          const { admin, store } = fixture;
          const names = locals.filter((local) => !/-partition-\d+$/.test(local) && local !== '.' && local !== '..');
          const namespace = `prop/run-${run++}`;
          await admin.createNamespace(namespace, { numberOfTopicBuckets: buckets });
          const results = await admin.createTopics(names.map((local) => `persistent://${namespace}/${local}`));
          expect(results.every((result) => result.created)).toBe(true);
          const live = new Set(names);
          for (const pick of deletions) {
            if (names.length === 0) break;
            const local = names[pick % names.length]!;
            if (!live.has(local)) continue;
            const topic = await admin.getTopic(`persistent://${namespace}/${local}`);
            // Half the deleted topics have a ledger, so they linger as DELETING nodes with a marker.
            if (pick % 2 === 0) {
              const info = create(ManagedLedgerInfoSchema, {
                state: ManagedLedgerState.ACTIVE,
                ledgerInfo: [{ ledgerId: BigInt(pick + 1) }],
              });
              await store.put(topic.managedLedgerPath, toBinary(ManagedLedgerInfoSchema, info));
            }
            await admin.deleteTopic(`persistent://${namespace}/${local}`);
            live.delete(local);
          }
          const { topics } = await listAll(admin, namespace, pageSize);
          expect(topics).toEqual(expectedOrder(namespace, live));
          expect(await admin.countTopics(namespace)).toBe(live.size);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('lists only the names with a prefix, from the prefix on, in every bucket layout and page size', async () => {
    const { admin } = fixture;
    await admin.createNamespace('prop/prefix', { numberOfTopicBuckets: 16 });
    // Characters that sort around each other once encoded: plain, '+' (space), '%XX' (accents, '%', '$').
    const unit = fc.constantFrom('a', 'b', 'A', '0', '-', '.', '_', '*', ' ', 'é', '%', '$');
    const sampled = fc.sample(fc.string({ minLength: 1, maxLength: 6, unit }), { numRuns: 400, seed: 11 });
    // '.' and '..' are not path segments, so not topic names.
    const locals = [...new Set(sampled)].filter((local) => local !== '.' && local !== '..');
    const results = await admin.createTopics(locals.map((local) => `prop/prefix/${local}`));
    expect(results.filter((result) => !result.created)).toEqual([]);
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 3, unit }),
        fc.integer({ min: 1, max: 40 }),
        async (prefix, pageSize) => {
          const topics: string[] = [];
          let token = '';
          let pages = 0;
          do {
            const page = await admin.listTopics('prop/prefix', token, pageSize, prefix);
            topics.push(...page.topics);
            token = page.nextPageToken;
            pages++;
          } while (token !== '' && pages < 1_000);
          const expected = expectedOrder('prop/prefix', locals).filter((name) =>
            name.slice('persistent://prop/prefix/'.length).startsWith(prefix),
          );
          expect(topics).toEqual(expected);
        },
      ),
      { numRuns: 60, seed: 5 },
    );
    await expect(admin.listTopics('prop/prefix', '', 10, 'x'.repeat(10_000))).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_TOPIC_PREFIX',
    });
  });

  it('makes progress with more buckets than one page may read', async () => {
    const { admin } = fixture;
    await admin.createNamespace('prop/wide', { numberOfTopicBuckets: 1000 });
    const locals = Array.from({ length: 300 }, (_, index) => `w${index}`);
    await admin.createTopics(locals.map((local) => `prop/wide/${local}`));
    const { topics, pages } = await listAll(admin, 'prop/wide', 50);
    expect(topics).toEqual(expectedOrder('prop/wide', locals));
    // 1000 unknown heads at 128 reads a page: the first pages learn heads before any topic can be handed out.
    expect(pages).toBeGreaterThan(300 / 50);
  });

  it('stays correct when the merge state outgrows the token (long, unrelated names in 64 buckets)', async () => {
    const { admin } = fixture;
    await admin.createNamespace('prop/long', { numberOfTopicBuckets: 64 });
    const random = fc.sample(
      fc.string({ minLength: 800, maxLength: 900, unit: fc.constantFrom('q', 'w', 'e', 'r', 't', 'y') }),
      { numRuns: 200, seed: 7 },
    );
    const locals = [...new Set(random)];
    const results = await admin.createTopics(locals.map((local) => `prop/long/${local}`));
    expect(results.filter((result) => !result.created)).toEqual([]);
    const { topics, pages } = await listAll(admin, 'prop/long', 7);
    expect(topics).toEqual(expectedOrder('prop/long', locals));
    expect(pages).toBeGreaterThan(locals.length / 7);
  });

  describe('with the read-ahead kept between pages', () => {
    const locals = Array.from({ length: 2_000 }, (_, index) => `r${String(index).padStart(5, '0')}`);
    beforeAll(async () => {
      await fixture.admin.createNamespace('prop/ahead', { numberOfTopicBuckets: 64 });
      const results = await fixture.admin.createTopics(locals.map((local) => `prop/ahead/${local}`));
      expect(results.every((result) => result.created)).toBe(true);
    });

    it('lists the same topics with fewer than half the store reads', async () => {
      const plain = counting(fixture.store);
      const withoutCache = await pages(plain.store, 'prop/ahead', 64, 100, () => undefined);
      const cached = counting(fixture.store);
      const cache = new ListingCache();
      const withCache = await pages(cached.store, 'prop/ahead', 64, 100, () => cache);
      expect(withoutCache).toEqual(expectedOrder('prop/ahead', locals));
      expect(withCache).toEqual(withoutCache);
      expect(cached.reads()).toBeLessThan(plain.reads() / 2);
      // The last page's token is '': nothing is left behind for a listing that ended.
      expect(cache.size).toBe(0);
    });

    it('continues from a token alone when the page before it was read elsewhere or its read-ahead expired', async () => {
      let now = 0;
      const cache = new ListingCache(500_000, 1_000, () => now);
      const topics = await pages(fixture.store, 'prop/ahead', 64, 100, (page) => {
        // Every third page comes to a replica without the read-ahead; every fifth finds it expired.
        if (page % 5 === 4) now += 5_000;
        return page % 3 === 2 ? undefined : cache;
      });
      expect(topics).toEqual(expectedOrder('prop/ahead', locals));
    });

    it('keeps at most its bound of listings, however few names they hold, the oldest going first', () => {
      const cache = new ListingCache(100, 60_000, () => 0, 2);
      const empty = { ready: Promise.resolve({ runs: [], markers: undefined, reads: 0, rounds: 0 }), names: 0 };
      for (const key of ['a', 'b', 'c']) cache.keep(key, empty);
      expect(cache.size).toBe(2);
      expect(cache.take('a')).toBeUndefined();
      expect(cache.take('c')).toBeDefined();
    });

    it('keeps at most its bound of names, the oldest listings going first', async () => {
      const cache = new ListingCache(100, 60_000, () => 0);
      const buffers = (names: number) => ({
        ready: Promise.resolve({ runs: [], markers: undefined, reads: 0, rounds: 0 }),
        names,
      });
      cache.keep('a', buffers(60));
      cache.keep('b', buffers(30));
      cache.keep('c', buffers(30));
      expect(cache.take('a')).toBeUndefined();
      expect(cache.take('b')).toBeDefined();
      cache.keep('huge', buffers(101));
      expect(cache.take('huge')).toBeUndefined();
      expect(cache.take('c')).toBeDefined();
      expect(cache.size).toBe(0);
    });
  });
});
