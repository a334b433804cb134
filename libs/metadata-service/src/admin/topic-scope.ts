import { MAX_PATH_BYTES } from '@ledgerline/metadata-store';
import { managedLedgerPath, NamespaceName, TopicName, NamingErrorReason } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { deletingTopicPath, leasePath, partitionedTopicPath } from '../records/layout.js';
import { MAX_NAMESPACE_TOPIC_BUCKETS } from '../limits.js';
import { parseNamespace, readNamespace } from './namespaces.js';
import type { NamespaceRecord } from '../records/records.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/** Parses a topic name; only persistent topics have metadata here. */
export function parseTopic(name: unknown): TopicName {
  const topic = TopicName.parse(name as string);
  parseNamespace(topic.namespaceName.toString());
  if (topic.domain !== 'persistent') {
    throw invalidArgument(
      MetadataServiceReason.NON_PERSISTENT_TOPIC,
      `${topic.toString()} is non-persistent: only persistent topics have managed ledgers and metadata`,
    );
  }
  if (topic.encodedLocalName === '.' || topic.encodedLocalName === '..') {
    throw invalidArgument(
      NamingErrorReason.INVALID_TOPIC_NAME,
      `'${topic.localName}' cannot be a topic name: it is not a valid path segment`,
    );
  }
  checkPathLengths(topic);
  return topic;
}

/**
 * Every metadata path of a topic must fit the store's MAX_PATH_BYTES. The
 * longest are its managed-ledger node in the last possible bucket and its
 * admin records; a name that would not fit is refused up front.
 */
export function checkPathLengths(topic: TopicName): void {
  const longest = Math.max(
    managedLedgerPath(topic, 1).length + `/$${MAX_NAMESPACE_TOPIC_BUCKETS - 1}`.length,
    partitionedTopicPath(topic).length,
    deletingTopicPath(topic).length,
    leasePath(topic).length,
  );
  if (longest > MAX_PATH_BYTES) {
    throw invalidArgument(
      MetadataServiceReason.TOPIC_NAME_TOO_LONG,
      `the metadata paths of ${topic.toString().slice(0, 120)}... would be ${longest} bytes, more than ${MAX_PATH_BYTES}; ` +
        'use a shorter name (a non-ASCII character takes up to 9 bytes once encoded)',
    );
  }
}

/**
 * A topic together with where its data lives. For a reader namespace (PIP-63)
 * the data is the writer namespace's: `storageTopic` is the same local name
 * there, laid out with the writer's bucket count.
 */
export interface TopicScope {
  topic: TopicName;
  namespaceRecord: NamespaceRecord;
  storageNamespace: NamespaceName;
  storageBuckets: number;
  storageTopic: TopicName;
  readonly: boolean;
}

export async function resolveNamespaceStorage(
  context: AdminContext,
  namespace: NamespaceName,
): Promise<{ record: NamespaceRecord; storageNamespace: NamespaceName; storageBuckets: number; readonly: boolean }> {
  const found = await readNamespace(context, namespace);
  const writer = found.record.policies.writerNamespace;
  if (writer === '') {
    return {
      record: found.record,
      storageNamespace: namespace,
      storageBuckets: found.record.policies.numberOfTopicBuckets,
      readonly: false,
    };
  }
  const writerNamespace = NamespaceName.parse(writer);
  const writerRecord = await readNamespace(context, writerNamespace);
  return {
    record: found.record,
    storageNamespace: writerNamespace,
    storageBuckets: writerRecord.record.policies.numberOfTopicBuckets,
    readonly: true,
  };
}

export async function resolveTopic(context: AdminContext, name: string | TopicName): Promise<TopicScope> {
  const topic = typeof name === 'string' ? parseTopic(name) : name;
  const storage = await resolveNamespaceStorage(context, topic.namespaceName);
  return {
    topic,
    namespaceRecord: storage.record,
    storageNamespace: storage.storageNamespace,
    storageBuckets: storage.storageBuckets,
    storageTopic: storage.readonly ? TopicName.inNamespace(storage.storageNamespace, topic.localName) : topic,
    readonly: storage.readonly,
  };
}

export function storagePath(scope: TopicScope, topic: TopicName = scope.storageTopic): string {
  return managedLedgerPath(topic, scope.storageBuckets);
}

export function topicNotFound(topic: TopicName): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    MetadataServiceReason.TOPIC_NOT_FOUND,
    `topic ${topic.toString()} does not exist`,
    {
      details: { topic: topic.toString() },
    },
  );
}

export function topicExists(topic: TopicName): LedgerlineError {
  return new LedgerlineError(
    'ALREADY_EXISTS',
    MetadataServiceReason.TOPIC_EXISTS,
    `topic ${topic.toString()} already exists`,
    {
      details: { topic: topic.toString() },
    },
  );
}

export function tooManyTopics(namespace: NamespaceName, maxTopics: number): LedgerlineError {
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    MetadataServiceReason.TOO_MANY_TOPICS,
    `namespace ${namespace.toString()} already has its maximum of ${maxTopics} topics (policy maxTopics)`,
    { details: { namespace: namespace.toString(), maxTopics: String(maxTopics) } },
  );
}
