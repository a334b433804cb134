import { encodeLocalName, namespacePersistencePrefix, type NamespaceName, type TopicName } from '@ledgerline/naming';

/**
 * Where the metadata service keeps its state in the metadata store. Topic
 * data lives exactly where Pulsar (with PIP-157) keeps it, under
 * `/managed-ledgers/`; everything only the service reads sits under `/admin`,
 * `/owners`, `/sessions` and `/leases`.
 *
 *   /admin/tenants/<tenant>                               tenant record
 *   /admin/namespaces/<tenant>/<ns>                       namespace record (policies, created time)
 *   /admin/topic-counts/<tenant>/<ns>                     topic counter (exact limit, O(1) count)
 *   /admin/partitioned-topics/<tenant>/<ns>/<encoded>     partitioned topic record (partition count)
 *   /admin/deleting-topics/<tenant>/<ns>/<encoded>        topic deleted, ledgers awaiting the garbage collector
 *   /admin/topic-ids/<tenant>/<ns>/<encoded>              id of a non-partitioned topic created before ids existed
 *   /admin/topic-id-index/<tenant>/<ns>/<id>              topic id -> topic (a hint, checked on every lookup)
 *   /admin/namespace-readers/<tenant>/<ns>/<reader>       reader namespaces mirroring a writer (PIP-63)
 *   /managed-ledgers/<tenant>/<ns>/persistent[/$<b>]/<encoded>   ManagedLedgerInfo (proto2 bytes)
 *   /owners/<group>/<instanceId>                          owner registration and its session deadline
 *   /sessions/<sessionId>                                 session id -> owner node
 *   /leases/<tenant>/<ns>/<encoded>                       topic lease (held or free; the version only grows)
 *   /kafka/groups/<tenant>/<ns>/<group>                   a Kafka group's index of committed partitions (its state)
 *   /kafka/groups/<tenant>/<ns>/<group>/<encoded>         one entry per partition topic the group committed on
 *   sequence `ledger-id`                                  ledger ids
 */
export const TENANTS_DIR = '/admin/tenants';
export const NAMESPACES_DIR = '/admin/namespaces';
export const TOPIC_COUNTS_DIR = '/admin/topic-counts';
export const PARTITIONED_TOPICS_DIR = '/admin/partitioned-topics';
export const DELETING_TOPICS_DIR = '/admin/deleting-topics';
export const NAMESPACE_READERS_DIR = '/admin/namespace-readers';
export const TOPIC_IDS_DIR = '/admin/topic-ids';
export const TOPIC_ID_INDEX_DIR = '/admin/topic-id-index';
export const OWNERS_DIR = '/owners';
export const SESSIONS_DIR = '/sessions';
export const LEASES_DIR = '/leases';
export const KAFKA_GROUPS_DIR = '/kafka/groups';

export function tenantPath(tenant: string): string {
  return `${TENANTS_DIR}/${tenant}`;
}

export function tenantNamespacesDir(tenant: string): string {
  return `${NAMESPACES_DIR}/${tenant}`;
}

export function namespacePath(namespace: NamespaceName): string {
  return `${NAMESPACES_DIR}/${namespace.toString()}`;
}

export function topicCountPath(namespace: NamespaceName): string {
  return `${TOPIC_COUNTS_DIR}/${namespace.toString()}`;
}

export function partitionedTopicsDir(namespace: NamespaceName): string {
  return `${PARTITIONED_TOPICS_DIR}/${namespace.toString()}`;
}

export function partitionedTopicPath(topic: TopicName): string {
  return `${partitionedTopicsDir(topic.namespaceName)}/${topic.encodedLocalName}`;
}

export function deletingTopicsDir(namespace: NamespaceName): string {
  return `${DELETING_TOPICS_DIR}/${namespace.toString()}`;
}

export function deletingTopicPath(topic: TopicName): string {
  return `${deletingTopicsDir(topic.namespaceName)}/${topic.encodedLocalName}`;
}

export function legacyTopicIdPath(topic: TopicName): string {
  return `${TOPIC_IDS_DIR}/${topic.namespaceName.toString()}/${topic.encodedLocalName}`;
}

/** Ids are indexed by namespace, so a lookup by id is authorized on the namespace it names. */
export function topicIdIndexPath(namespace: NamespaceName, topicId: string): string {
  return `${TOPIC_ID_INDEX_DIR}/${namespace.toString()}/${topicId}`;
}

export function namespaceReadersDir(writer: NamespaceName): string {
  return `${NAMESPACE_READERS_DIR}/${writer.toString()}`;
}

/** One segment per reader: `tenant/ns` with its slash encoded. */
export function namespaceReaderPath(writer: NamespaceName, reader: NamespaceName): string {
  return `${namespaceReadersDir(writer)}/${encodeLocalName(reader.toString())}`;
}

/** The managed-ledger directories of a namespace, from the root down to `persistent`. */
export function managedLedgerParentDirs(namespace: NamespaceName): string[] {
  const persistent = namespacePersistencePrefix(namespace, 'persistent');
  const namespaceDir = persistent.slice(0, persistent.lastIndexOf('/'));
  const tenantDir = namespaceDir.slice(0, namespaceDir.lastIndexOf('/'));
  return ['/managed-ledgers', tenantDir, namespaceDir, persistent];
}

export function ownersGroupDir(group: string): string {
  return `${OWNERS_DIR}/${group}`;
}

export function ownerPath(group: string, instanceId: string): string {
  return `${OWNERS_DIR}/${group}/${instanceId}`;
}

export function sessionPath(sessionId: string): string {
  return `${SESSIONS_DIR}/${sessionId}`;
}

/** Leases are by namespace and name, never by bucket: ownership does not depend on the storage layout. */
export function leasePath(topic: TopicName): string {
  return `${LEASES_DIR}/${topic.namespaceName.toString()}/${topic.encodedLocalName}`;
}

export function kafkaGroupsDir(namespace: NamespaceName): string {
  return `${KAFKA_GROUPS_DIR}/${namespace.toString()}`;
}

/** A group id is one path segment, encoded as a topic's local name is (any UTF-8, no `/`). */
export function kafkaGroupPath(namespace: NamespaceName, group: string): string {
  return `${kafkaGroupsDir(namespace)}/${encodeLocalName(group)}`;
}

export function kafkaGroupEntryPath(namespace: NamespaceName, group: string, topic: TopicName): string {
  return `${kafkaGroupPath(namespace, group)}/${topic.encodedLocalName}`;
}
