/**
 * Every bound the metadata service enforces, with its unit. Requests beyond a
 * bound get INVALID_ARGUMENT or RESOURCE_EXHAUSTED with a reason that names it;
 * loops stop at their bound rather than spin.
 */

/**
 * The most topic buckets a namespace created here may have. The naming rules
 * allow more; the service is stricter because a listing page carries one
 * head per bucket in its continuation token (see topic-listing.ts).
 */
export const MAX_NAMESPACE_TOPIC_BUCKETS = 1024;

/** The largest `maxTopics` policy (0 means unlimited). */
export const MAX_TOPICS_POLICY = 1_000_000_000;

/** The most partitions one partitioned topic may have. */
export const MAX_PARTITIONS = 10_000;

/** The most topics one CreateTopics call may carry. */
export const MAX_CREATE_BATCH = 10_000;

/** How many store writes one create call keeps in flight at once. */
export const CREATE_CONCURRENCY = 64;

/** Default and largest page of ListTopics, in topic names. */
export const DEFAULT_TOPIC_PAGE = 1000;
export const MAX_TOPIC_PAGE = 10_000;

/**
 * The most store calls (children reads) one ListTopics page may issue, and the
 * most sequential waves they are grouped into. A page that would need more ends
 * early with a continuation token; pages may therefore hold fewer names than
 * asked for, even none.
 */
export const MAX_LIST_CALLS_PER_PAGE = 128;
export const MAX_LIST_WAVES_PER_PAGE = 4;

/**
 * ListTopics keeps what a page read past the names it handed out, for the page
 * that continues it (topic-listing.ts, ListingCache): at most this many names
 * in all, each kept at most this long.
 */
export const LISTING_CACHE_MAX_NAMES = 500_000;
export const LISTING_CACHE_TTL_MS = 10_000;
/** And at most this many listings, whatever they hold: each keeps its buckets' runs even when they are empty. */
export const LISTING_CACHE_MAX_LISTINGS = 10_000;

/**
 * The most names one listing reads ahead, over all its buckets, when its
 * read-ahead is kept: each bucket read of a long listing asks for at most this
 * split evenly over the buckets (and at most four pages, and a store page), so
 * that a page costs few store reads (page-merge.ts, bucketReadSizes).
 */
export const MAX_LISTING_READ_AHEAD_NAMES = 32_000;

/** The largest continuation token ListTopics hands out or accepts, in bytes. */
export const MAX_PAGE_TOKEN_BYTES = 64 * 1024;

/** The most namespaces one tenant and tenants the cluster may list in one reply. */
export const MAX_LISTED_TENANTS = 10_000;
export const MAX_LISTED_NAMESPACES = 10_000;

/** The most reader namespaces that may mirror one writer namespace (PIP-63). */
export const MAX_READERS_PER_WRITER = 64;

/** Tenant admin roles: how many, and how long each. */
export const MAX_ADMIN_ROLES = 64;
export const MAX_ADMIN_ROLE_LENGTH = 256;

/** Owner groups and instance ids: `[A-Za-z0-9_.:-]`, at most this long. */
export const MAX_OWNER_GROUP_LENGTH = 64;
export const MAX_INSTANCE_ID_LENGTH = 128;
export const MAX_ADVERTISED_ADDRESS_LENGTH = 256;

/** Owner sessions: the TTL bounds and the default when a request gives none. */
export const MIN_SESSION_TTL_MS = 100;
export const MAX_SESSION_TTL_MS = 5 * 60_000;
export const DEFAULT_SESSION_TTL_MS = 10_000;

/** The most live owners one lookup considers in a group. */
export const MAX_OWNERS_PER_GROUP = 1000;

/** Compare-and-set retry loops: attempts, and the cap on the jittered back-off between them. */
/**
 * How old a topic-id index entry whose topic does not have that id must be
 * before a lookup removes it: younger ones may belong to a create still under way.
 */
export const STALE_TOPIC_ID_ENTRY_MS = 60_000;
export const MAX_CAS_ATTEMPTS = 500;
export const MAX_CAS_BACKOFF_MS = 20;
/** The first back-off between conflicting compare-and-set attempts; it doubles up to MAX_CAS_BACKOFF_MS, with full jitter. */
export const CAS_BACKOFF_START_MS = 1;

/** Topic-count reservations waiting in one instance for one namespace's counter. */
export const MAX_PENDING_RESERVATIONS = 100_000;

/**
 * Topics one instance remembers it is auto-creating on lookup, so racing
 * lookups of one topic share its creation; past it a lookup creates on its own
 * (still correct: the loser's ALREADY_EXISTS counts as created).
 */
export const MAX_SHARED_AUTO_CREATIONS = 10_000;

/**
 * A topic counter is recounted only when it has not changed for this long, so
 * that no create that reserved a slot is still writing its node.
 */
export const DEFAULT_RECOUNT_SETTLE_MS = 30_000;

/** Children read per store call when a full scan (recount, sweep) pages a directory. */
export const SCAN_PAGE = 5000;

/** The most deletion markers one namespace delete inspects (removing those whose topic node is gone). */
export const MAX_MARKER_CHECKS_PER_DELETE = 1000;

/** The most expired owner sessions one sweep removes. */
export const MAX_SWEEP_REMOVALS = 1000;

/** Watch streams: notifications queued for a slow client before newer ones are dropped. */
export const MAX_WATCH_BUFFER = 1000;
export const MAX_WATCH_PREFIX_BYTES = 1024;

/**
 * Store reads in flight at once, per kind of fan-out. Each bounds how many
 * concurrent calls one admin request puts on the metadata store, so one
 * request cannot take every connection's pipeline; the numbers grow with how
 * small and how many the reads are.
 */
/** Owner groups listed at once when listing the owners of every group. */
export const OWNER_GROUP_LIST_CONCURRENCY = 8;
/** Owner records read at once within one group (up to MAX_OWNERS_PER_GROUP small records). */
export const OWNER_READ_CONCURRENCY = 64;
/** Reader namespace records read at once when finding the readers of a writer namespace. */
export const READER_NAMESPACE_READ_CONCURRENCY = 16;

/** Roles with permissions on one namespace (each grant is a few bytes in the namespace record). */
export const MAX_NAMESPACE_PERMISSION_ROLES = 1024;

/**
 * The Kafka gateway's index of a group's committed partitions (kafka-group-index.ts): the most entries one
 * group's index holds in a namespace (past it the group is marked unindexed), the longest group id in UTF-8 bytes,
 * and the entries removed at once.
 */
export const MAX_KAFKA_GROUP_INDEX_ENTRIES = 10_000;
export const MAX_KAFKA_GROUP_ID_BYTES = 1024;
export const KAFKA_GROUP_INDEX_CONCURRENCY = 16;
