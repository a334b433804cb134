import type { MetadataStore } from '@ledgerline/metadata-store';
import {
  decodeLocalName,
  encodeLocalName,
  MAX_LOCAL_NAME_LENGTH,
  managedLedgerPath,
  TopicName,
  topicListingPaths,
  type NamespaceName,
} from '@ledgerline/naming';
import { invalidArgument } from '@ledgerline/errors';
import { deletingTopicsDir } from '../records/layout.js';
import { DEFAULT_TOPIC_PAGE, MAX_TOPIC_PAGE } from '../limits.js';
import type { ListingCache } from './listing-cache.js';
import { readLiveManagedLedger } from '../records/managed-ledger-nodes.js';
import { PageMerge } from './page-merge.js';
import { decodePageToken, encodePageToken, initialListingState } from './page-token.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

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
  /** Only local names that start with this (decoded, as a user types it); '' for all. */
  prefix?: string;
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

/**
 * Lists a namespace's topics across all its buckets, sorted by encoded local
 * name (the store's byte order; for names of letters, digits and `.-_*` this
 * is the plain name order), one page at a time.
 *
 * It is a k-way merge (page-merge.ts) whose state travels in the page token
 * (page-token.ts). Cost bound per page, whatever the bucket count:
 *   - at most MAX_LIST_WAVES_PER_PAGE rounds of concurrent store reads,
 *   - at most MAX_LIST_CALLS_PER_PAGE children reads in all (buckets and the
 *     deleted-topic markers), plus at most MAX_VERIFICATIONS_PER_PAGE node reads
 *     in one final round, to check topics that carry a deletion marker.
 * A page that would need more ends early with a token, so pages may be
 * shorter than asked (with many buckets the first may even be empty); a page
 * without a token is the last.
 *
 * A page continued from a token alone must read every bucket it passes the
 * head of. With `cache`, a page keeps what it read past its end for the page
 * that continues it, the buckets of a long listing are read in growing
 * batches (bucketReadSizes), and the next page's first round of reads starts
 * as this page is answered (PageMerge.readAhead; it counts against the next
 * page's bounds), so that most pages cost a few reads and seldom wait for one.
 */
export async function listTopicPage(
  store: MetadataStore,
  request: ListingRequest,
  cache?: ListingCache,
): Promise<TopicPage> {
  const pageSize = normalisePageSize(request.pageSize);
  const prefix = encodedPrefix(request.prefix ?? '');
  const scope = request.storageNamespace.toString();
  const state =
    request.pageToken === ''
      ? { ...initialListingState(request.buckets), last: beforePrefix(prefix) }
      : decodePageToken(request.pageToken, scope, request.buckets);
  const cached = request.pageToken === '' ? undefined : await cache?.take(`${scope}\n${request.pageToken}`)?.ready;
  const merge = new PageMerge(store, {
    dirs: topicListingPaths(request.storageNamespace, request.buckets),
    markerDir: deletingTopicsDir(request.storageNamespace),
    pageSize,
    last: state.last,
    heads: state.heads,
    cached,
    readAhead: cache !== undefined,
  });
  const merged = await merge.run();
  // Names come sorted: the first one past the prefix ends the listing.
  const pastPrefix = prefix === '' ? -1 : merged.findIndex((name) => !name.startsWith(prefix));
  const names = pastPrefix === -1 ? merged : merged.slice(0, pastPrefix);
  const kept = await verifyMarked(store, request, names, merge.markedForCheck);
  const finished = pastPrefix !== -1 || merge.finished();
  const nextPageToken = finished ? '' : encodePageToken(scope, { last: merge.last, heads: merge.heads() });
  // The token is made first: the read-ahead moves the heads on while it runs.
  if (nextPageToken !== '') cache?.keep(`${scope}\n${nextPageToken}`, merge.readAhead());
  const namePrefix = `persistent://${request.displayNamespace.toString()}/`;
  return {
    topics: kept.map((encoded) => namePrefix + decodeLocalName(encoded)),
    nextPageToken,
  };
}

/** A local-name prefix in the store's encoding, so it compares as the stored names do. */
function encodedPrefix(prefix: string): string {
  if (prefix.length > MAX_LOCAL_NAME_LENGTH) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_TOPIC_PREFIX,
      `a topic prefix is at most ${MAX_LOCAL_NAME_LENGTH} characters, got ${prefix.length}`,
    );
  }
  return encodeLocalName(prefix);
}

/** Every character an encoded local name may hold, in the store's byte order. */
const ENCODED_CHARACTERS = '%*+-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

/**
 * The name a listing starts after so that its first name is the first one
 * with the (encoded) prefix: the prefix with its last character replaced by
 * the encoded character just below it (`$` below the lowest, `%`), followed by
 * DEL (0x7f), which sorts above every encoded character, so no stored name
 * falls between it and the prefix. It holds no `/` (not a child name) and
 * sorts after the bucket directories (`$<b>`) beside unbucketed topics.
 */
export function beforePrefix(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  const index = ENCODED_CHARACTERS.indexOf(prefix.at(-1)!);
  if (index === -1) throw new Error(`beforePrefix: ${JSON.stringify(prefix)} is not an encoded name`);
  const below = index === 0 ? '$' : ENCODED_CHARACTERS[index - 1]!;
  return prefix.slice(0, -1) + below + '\x7f';
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
