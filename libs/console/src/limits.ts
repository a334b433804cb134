/**
 * Every bound of the console, with its unit. A request past one is refused
 * INVALID_ARGUMENT / CONSOLE_LIMIT_EXCEEDED, never cut silently.
 */

/** Topics a page of BrowseTopics holds (ListTopics' own bound). */
export const MAX_TOPIC_PAGE = 1_000;
export const DEFAULT_TOPIC_PAGE = 100;
/**
 * ListTopics calls one BrowseTopics page makes at most: more than one only
 * when a partitioned topic's partitions, folded into its row, left it short.
 */
export const MAX_LISTING_CALLS_PER_PAGE = 8;
/** Tenants ListTenantSummaries reads; more are reported as truncated. */
export const MAX_TENANTS = 1_000;
/** Partitions GetTopicSummary reads stats of. */
export const MAX_SUMMARY_PARTITIONS = 1_000;
/** Calls to the services one console request has in flight at once. */
export const FAN_OUT_CONCURRENCY = 16;
/** Cells of the ack-hole map. */
export const MAX_ACK_MAP_CELLS = 4_096;
export const DEFAULT_ACK_MAP_CELLS = 512;
/** Exact acknowledged ranges in one page. */
export const MAX_ACK_RANGE_PAGE = 1_000;
export const DEFAULT_ACK_RANGE_PAGE = 100;
/** Messages one browse returns. */
export const MAX_BROWSE_MESSAGES = 500;
export const DEFAULT_BROWSE_MESSAGES = 50;
/** Payload bytes returned per browsed message; longer payloads are cut and marked. */
export const MAX_BROWSE_PAYLOAD_BYTES = 1024 * 1024;
export const DEFAULT_BROWSE_PAYLOAD_BYTES = 64 * 1024;
/** Bytes one FetchByOffset of a browse asks for (the owner's answer stays below the gRPC message bound). */
export const BROWSE_FETCH_BYTES = 2 * 1024 * 1024;
/** FetchByOffset calls one browse makes at most. */
export const MAX_BROWSE_FETCHES = 16;
/**
 * A produced payload: the SDK's MAX_ENTRY_SIZE_BYTES (the 4 MiB gRPC message
 * bound less room for the envelope).
 */
export const MAX_PRODUCE_PAYLOAD_BYTES = 4 * 1024 * 1024 - 64 * 1024;
/** A Connect request body (the produce payload, JSON-encoded in base64, plus room). */
export const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
/** Pending deletions in one page of the collector summary (ListPendingDeletions' bound). */
export const MAX_PENDING_PAGE = 1_000;
export const DEFAULT_PENDING_PAGE = 100;
/** Owner channels the console keeps open; the least recently used closes past it. */
export const MAX_OWNER_CHANNELS = 64;
/** Kafka consumer groups one ListKafkaGroups describes. */
export const MAX_KAFKA_GROUPS = 1_000;
