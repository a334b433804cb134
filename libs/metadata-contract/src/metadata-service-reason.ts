/** The stable reasons the metadata service answers with (admin, ownership, leases, lookup, the store API); programs branch on these. */
export const MetadataServiceReason = {
  BATCH_TOO_LARGE: 'BATCH_TOO_LARGE',
  BUCKETS_IMMUTABLE: 'BUCKETS_IMMUTABLE',
  CORRUPT_METADATA: 'CORRUPT_METADATA',
  DUPLICATE_TOPIC: 'DUPLICATE_TOPIC',
  INVALID_ADMIN_ROLES: 'INVALID_ADMIN_ROLES',
  INVALID_ADVERTISED_ADDRESS: 'INVALID_ADVERTISED_ADDRESS',
  /** A grant names no action, an unknown one, or a role that is empty or too long. */
  INVALID_PERMISSION: 'INVALID_PERMISSION',
  INVALID_INSTANCE_ID: 'INVALID_INSTANCE_ID',
  INVALID_MAX_TOPICS: 'INVALID_MAX_TOPICS',
  INVALID_OWNER_GROUP: 'INVALID_OWNER_GROUP',
  INVALID_OWNER_ROLE: 'INVALID_OWNER_ROLE',
  INVALID_PAGE_SIZE: 'INVALID_PAGE_SIZE',
  /** A topic id that is not 16 bytes, or is all zero (Kafka's "no id"). */
  INVALID_TOPIC_ID: 'INVALID_TOPIC_ID',
  /** A Kafka group id that is empty, longer than an index path allows, or names a partition count out of bounds. */
  INVALID_KAFKA_GROUP: 'INVALID_KAFKA_GROUP',
  /** DeleteKafkaGroupIndex found the group's index changed since it was read (an entry added or removed): read it again. */
  KAFKA_GROUP_INDEX_CHANGED: 'KAFKA_GROUP_INDEX_CHANGED',
  INVALID_PAGE_TOKEN: 'INVALID_PAGE_TOKEN',
  INVALID_PARTITIONS: 'INVALID_PARTITIONS',
  INVALID_PATH_PREFIX: 'INVALID_PATH_PREFIX',
  /** A topic listing's prefix is longer than a local name may be, or is not a string a name could start with. */
  INVALID_TOPIC_PREFIX: 'INVALID_TOPIC_PREFIX',
  INVALID_RETENTION: 'INVALID_RETENTION',
  INVALID_SESSION_ID: 'INVALID_SESSION_ID',
  INVALID_SESSION_TTL: 'INVALID_SESSION_TTL',
  /** A keep-alive's load report has a figure that is negative, not finite or beyond any real load. */
  INVALID_OWNER_LOAD: 'INVALID_OWNER_LOAD',
  /** This metadata instance holds as many WatchOwnerSession streams as it may; the session lives by its TTL alone. */
  TOO_MANY_SESSION_WATCHES: 'TOO_MANY_SESSION_WATCHES',
  LEASE_HELD: 'LEASE_HELD',
  LEASE_LOST: 'LEASE_LOST',
  MALFORMED_VALUE: 'MALFORMED_VALUE',
  MISSING_OWNER: 'MISSING_OWNER',
  NAMESPACE_BEING_DELETED: 'NAMESPACE_BEING_DELETED',
  NAMESPACE_EXISTS: 'NAMESPACE_EXISTS',
  NAMESPACE_HAS_PENDING_DELETIONS: 'NAMESPACE_HAS_PENDING_DELETIONS',
  NAMESPACE_HAS_READERS: 'NAMESPACE_HAS_READERS',
  NAMESPACE_IS_WRITER: 'NAMESPACE_IS_WRITER',
  NAMESPACE_NOT_EMPTY: 'NAMESPACE_NOT_EMPTY',
  NAMESPACE_NOT_FOUND: 'NAMESPACE_NOT_FOUND',
  NAMESPACE_READONLY: 'NAMESPACE_READONLY',
  NON_PERSISTENT_TOPIC: 'NON_PERSISTENT_TOPIC',
  NO_LIVE_OWNER: 'NO_LIVE_OWNER',
  /** UpdatePartitionedTopic with a count that is not more than the topic has: partitions are only ever added. */
  PARTITION_COUNT_NOT_INCREASED: 'PARTITION_COUNT_NOT_INCREASED',
  PARTITION_NAME_RESERVED: 'PARTITION_NAME_RESERVED',
  PARTITION_OF_PARTITIONED_TOPIC: 'PARTITION_OF_PARTITIONED_TOPIC',
  PROCESS_CRASHED: 'PROCESS_CRASHED',
  RESERVATION_QUEUE_FULL: 'RESERVATION_QUEUE_FULL',
  RESERVED_PATH: 'RESERVED_PATH',
  STORE_PAGING_STUCK: 'STORE_PAGING_STUCK',
  TENANT_EXISTS: 'TENANT_EXISTS',
  TENANT_NOT_EMPTY: 'TENANT_NOT_EMPTY',
  TENANT_NOT_FOUND: 'TENANT_NOT_FOUND',
  TOO_MANY_READERS: 'TOO_MANY_READERS',
  TOO_MANY_TOPICS: 'TOO_MANY_TOPICS',
  TOO_MUCH_CONTENTION: 'TOO_MUCH_CONTENTION',
  TOPIC_CREATE_CONFLICT: 'TOPIC_CREATE_CONFLICT',
  TOPIC_EXISTS: 'TOPIC_EXISTS',
  TOPIC_IS_PARTITIONED: 'TOPIC_IS_PARTITIONED',
  TOPIC_NAME_TOO_LONG: 'TOPIC_NAME_TOO_LONG',
  TOPIC_NOT_FOUND: 'TOPIC_NOT_FOUND',
  /** UpdatePartitionedTopic on a non-partitioned topic, which cannot gain partitions (their names would differ). */
  TOPIC_NOT_PARTITIONED: 'TOPIC_NOT_PARTITIONED',
  WRITER_IS_READER: 'WRITER_IS_READER',
  WRITER_IS_SELF: 'WRITER_IS_SELF',
  WRONG_OWNER_GROUP: 'WRONG_OWNER_GROUP',
  WRONG_OWNER_ROLE: 'WRONG_OWNER_ROLE',
  /** An expected_version that is not a version that was read (1 or more). */
  INVALID_VERSION: 'INVALID_VERSION',
  /** FinishTopicDeletion on a node that is not a deleted topic with every ledger gone. */
  TOPIC_DELETION_UNFINISHED: 'TOPIC_DELETION_UNFINISHED',
  /** A path that is not a managed-ledger path (/managed-ledgers/...). */
  INVALID_MANAGED_LEDGER_PATH: 'INVALID_MANAGED_LEDGER_PATH',
  /** The owner session expired or does not exist: open a new session; what it held is released. */
  SESSION_EXPIRED: 'SESSION_EXPIRED',
  /** A transfer names the instance that already holds the lease. */
  TRANSFER_TO_SELF: 'TRANSFER_TO_SELF',
  /** ReclaimLease after the transfer's target took the lease up (or the lease moved on): the target owns the topic. */
  LEASE_TAKEN_UP: 'LEASE_TAKEN_UP',
} as const;
