export { NamespaceName } from './namespace-name.js';
export { TopicName, TOPIC_DOMAINS, DEFAULT_TENANT, DEFAULT_NAMESPACE } from './topic-name.js';
export type { TopicDomain } from './topic-name.js';
export { javaStringHashCode, topicBucket } from './topic-bucket.js';
export { encodeLocalName, decodeLocalName } from './url-codec.js';
export { persistenceName, managedLedgerPath } from './persistence-name.js';
export { parsePersistenceName } from './parse-persistence-name.js';
export type { ParsedPersistenceName } from './parse-persistence-name.js';
export {
  MAX_TOPIC_BUCKETS,
  MAX_TENANT_NAME_LENGTH,
  MAX_NAMESPACE_NAME_LENGTH,
  MAX_LOCAL_NAME_LENGTH,
  MAX_ENCODED_LOCAL_NAME_LENGTH,
  MAX_PARTITION_INDEX,
  MAX_TOPIC_NAME_LENGTH,
  MAX_PERSISTENCE_NAME_LENGTH,
} from './limits.js';

// For other packages: path building blocks, validators and the error reasons.
export {
  MANAGED_LEDGERS_ROOT,
  namespacePersistencePrefix,
  topicListingPaths,
  bucketSegment,
  parseBucketSegment,
} from './persistence-name.js';
export { validateBucketCount } from './topic-bucket.js';
export { validateTenant, validateNamespace, validateLocalName } from './validate-names.js';
export { validateDomain } from './topic-name.js';
export { PARTITIONED_TOPIC_SUFFIX, partitionIndexOf } from './partition-index.js';
export { NamingErrorReason } from './naming-error.js';
export type { NamingErrorReasonName } from './naming-error.js';
export { LEDGER_ID_SEQUENCE } from './ledger-id-sequence.js';
