import { managedLedgerPath, NamespaceName, TopicName } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/rpc';
import type { AdminContext } from './admin-context.js';
import { parseNamespace, readNamespace } from './namespaces.js';
import type { NamespaceRecord } from './records.js';

/** Parses a topic name; only persistent topics have metadata here. */
export function parseTopic(name: unknown): TopicName {
  const topic = TopicName.parse(name as string);
  parseNamespace(topic.namespaceName.toString());
  if (topic.domain !== 'persistent') {
    throw invalidArgument(
      'NON_PERSISTENT_TOPIC',
      `${topic.toString()} is non-persistent: only persistent topics have managed ledgers and metadata`,
    );
  }
  return topic;
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
  return new LedgerlineError('NOT_FOUND', 'TOPIC_NOT_FOUND', `topic ${topic.toString()} does not exist`, {
    details: { topic: topic.toString() },
  });
}

export function topicExists(topic: TopicName): LedgerlineError {
  return new LedgerlineError('ALREADY_EXISTS', 'TOPIC_EXISTS', `topic ${topic.toString()} already exists`, {
    details: { topic: topic.toString() },
  });
}

export function tooManyTopics(namespace: NamespaceName, maxTopics: number): LedgerlineError {
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    'TOO_MANY_TOPICS',
    `namespace ${namespace.toString()} already has its maximum of ${maxTopics} topics (policy maxTopics)`,
    { details: { namespace: namespace.toString(), maxTopics: String(maxTopics) } },
  );
}
