/**
 * Every bound the naming rules enforce. Pulsar itself sets none of these; we
 * set them so that a name always fits in a metadata key, a log line and a
 * gRPC message, and so that parsing an arbitrary string costs a bounded amount.
 */

/** The largest `numberOfTopicBuckets` a namespace may have (buckets are `$0` .. `$65535`). */
export const MAX_TOPIC_BUCKETS = 65_536;

/** Longest tenant name, in UTF-16 code units (all allowed characters are ASCII). */
export const MAX_TENANT_NAME_LENGTH = 255;

/** Longest namespace name (the part after `tenant/`), in UTF-16 code units. */
export const MAX_NAMESPACE_NAME_LENGTH = 255;

/** Longest topic local name, in UTF-16 code units (before URL encoding). */
export const MAX_LOCAL_NAME_LENGTH = 1024;

/** The largest partition index: Pulsar parses the index as a Java `int`. */
export const MAX_PARTITION_INDEX = 2_147_483_647;

/**
 * Longest URL-encoded local name. One UTF-16 code unit encodes to at most nine
 * characters (a BMP character is three UTF-8 bytes, each `%XX`).
 */
export const MAX_ENCODED_LOCAL_NAME_LENGTH = MAX_LOCAL_NAME_LENGTH * 9;

/** Longest input `TopicName.parse` looks at: `non-persistent://` plus the three parts. */
export const MAX_TOPIC_NAME_LENGTH =
  'non-persistent://'.length + MAX_TENANT_NAME_LENGTH + 1 + MAX_NAMESPACE_NAME_LENGTH + 1 + MAX_LOCAL_NAME_LENGTH;

/** Longest input `parsePersistenceName` looks at, with the `/managed-ledgers/` prefix and a bucket segment. */
export const MAX_PERSISTENCE_NAME_LENGTH =
  '/managed-ledgers/'.length +
  MAX_TENANT_NAME_LENGTH +
  1 +
  MAX_NAMESPACE_NAME_LENGTH +
  '/non-persistent/'.length +
  `$${MAX_TOPIC_BUCKETS - 1}/`.length +
  MAX_ENCODED_LOCAL_NAME_LENGTH;
