import type { NamespaceName } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { deletingTopicsDir, namespacePath, partitionedTopicsDir } from '../records/layout.js';
import { MAX_READERS_PER_WRITER } from '../limits.js';
import { deleteNamespace } from './namespace-deletion.js';
import { addReaderIndex, countIndexedReaders, readersOf, removeReaderIndex } from './namespace-readers.js';
import {
  createNamespaceRecord,
  parseNamespace,
  readNamespace,
  toNamespaceInfo,
  type NamespaceInfo,
} from './namespaces.js';
import { policiesForUpdate, type PolicyInput } from './policies.js';
import type { NamespaceRecord } from '../records/records.js';
import { hasChildren, writeRecord, type VersionedRecord } from '../records/store-records.js';
import { readTopicCounter, touchTopicCounter } from './topic-counter.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

function checkReadonlyFlag(readonly: boolean | undefined, isReader: boolean): void {
  if (readonly === undefined || readonly === isReader) return;
  throw invalidArgument(
    isReader ? 'READONLY_FOLLOWS_WRITER_NAMESPACE' : 'READONLY_NEEDS_WRITER_NAMESPACE',
    isReader
      ? 'a reader namespace (one with writerNamespace) is always readonly'
      : 'readonly marks a reader namespace: set writerNamespace to the namespace it mirrors',
  );
}

/** Creates a namespace; with writerNamespace in its policies it is created as a reader (PIP-63). */
export async function createNamespace(
  context: AdminContext,
  name: string,
  input: PolicyInput = {},
): Promise<NamespaceInfo> {
  const namespace = parseNamespace(name);
  const writer = input.writerNamespace ? parseNamespace(input.writerNamespace) : undefined;
  checkReadonlyFlag(input.readonly, writer !== undefined);
  const created = await createNamespaceRecord(context, namespace, input);
  if (writer === undefined) return created;
  try {
    return await setWriterNamespace(context, namespace.toString(), writer.toString());
  } catch (error) {
    await deleteNamespace(context, namespace.toString());
    throw error;
  }
}

/**
 * Changes the policies a request sets. numberOfTopicBuckets cannot change
 * (BUCKETS_IMMUTABLE); writerNamespace goes through setWriterNamespace's checks.
 */
export async function updateNamespace(context: AdminContext, name: string, input: PolicyInput): Promise<NamespaceInfo> {
  const namespace = parseNamespace(name);
  const writer =
    input.writerNamespace === undefined
      ? undefined
      : input.writerNamespace === ''
        ? ''
        : parseNamespace(input.writerNamespace).toString();
  let info = await retryOnConflict(`updating namespace ${namespace.toString()}`, async () => {
    const found = await readNamespace(context, namespace);
    checkReadonlyFlag(input.readonly, (writer ?? found.record.policies.writerNamespace) !== '');
    const policies = policiesForUpdate(found.record.policies, {
      ...input,
      writerNamespace: undefined,
      readonly: undefined,
    });
    const record: NamespaceRecord = { ...found.record, policies };
    const version = await writeRecord(context.store, namespacePath(namespace), record, found.version);
    return toNamespaceInfo(namespace, { ...found, record, version });
  });
  if (writer !== undefined && writer !== info.policies.writerNamespace) {
    info = await setWriterNamespace(context, namespace.toString(), writer);
  }
  return info;
}

function refuse(reason: string, message: string): LedgerlineError {
  return new LedgerlineError('FAILED_PRECONDITION', reason, message);
}

/**
 * PIP-63 `set-writer-namespace`: makes `readerName` a read-only mirror of
 * `writerName` ('' turns it back into an ordinary namespace). The writer must
 * exist and not be a reader itself; the reader must not be a writer for
 * another and must hold no topics of its own.
 */
export async function setWriterNamespace(
  context: AdminContext,
  readerName: string,
  writerName: string,
): Promise<NamespaceInfo> {
  const reader = parseNamespace(readerName);
  const writer = writerName === '' ? undefined : parseNamespace(writerName);
  if (writer !== undefined && writer.equals(reader)) {
    throw invalidArgument(
      MetadataServiceReason.WRITER_IS_SELF,
      `namespace ${reader.toString()} cannot be its own writer namespace`,
    );
  }
  try {
    return await retryOnConflict(`setting the writer namespace of ${reader.toString()}`, async () => {
      const found = await readNamespace(context, reader);
      if (writer === undefined) return clearWriter(context, reader, found);
      return setWriter(context, reader, writer, found);
    });
  } catch (error) {
    if (writer !== undefined) {
      const now = await readNamespace(context, reader, true).catch(() => undefined);
      if (now?.record.policies.writerNamespace !== writer.toString()) await removeReaderIndex(context, writer, reader);
    }
    throw error;
  }
}

async function clearWriter(context: AdminContext, reader: NamespaceName, found: VersionedRecord<NamespaceRecord>) {
  const previous = found.record.policies.writerNamespace;
  if (previous === '') return toNamespaceInfo(reader, found);
  const record: NamespaceRecord = {
    ...found.record,
    policies: { ...found.record.policies, writerNamespace: '', readonly: false },
  };
  const version = await writeRecord(context.store, namespacePath(reader), record, found.version);
  await removeReaderIndex(context, parseNamespace(previous), reader);
  return toNamespaceInfo(reader, { ...found, record, version });
}

async function setWriter(
  context: AdminContext,
  reader: NamespaceName,
  writer: NamespaceName,
  found: VersionedRecord<NamespaceRecord>,
) {
  const previous = found.record.policies.writerNamespace;
  if (previous === writer.toString()) return toNamespaceInfo(reader, found);
  if ((await readersOf(context, reader)).length > 0) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_IS_WRITER,
      `${reader.toString()} is the writer namespace of other namespaces; it cannot become a reader`,
    );
  }
  const counter = await readTopicCounter(context, reader);
  if (counter === undefined)
    throw new LedgerlineError(
      'NOT_FOUND',
      MetadataServiceReason.NAMESPACE_NOT_FOUND,
      `namespace ${reader.toString()} is incomplete`,
    );
  if (previous === '' && (counter.record.count > 0 || (await hasOwnTopics(context, reader)))) {
    throw refuse(
      MetadataServiceReason.NAMESPACE_NOT_EMPTY,
      `${reader.toString()} has topics of its own; a reader namespace shows its writer's topics only`,
    );
  }
  const writerFound = await readNamespace(context, writer);
  if (writerFound.record.policies.writerNamespace !== '') {
    throw refuse(
      MetadataServiceReason.WRITER_IS_READER,
      `${writer.toString()} is itself a reader namespace and cannot be a writer namespace`,
    );
  }
  if ((await countIndexedReaders(context, writer)) >= MAX_READERS_PER_WRITER) {
    throw new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      MetadataServiceReason.TOO_MANY_READERS,
      `${writer.toString()} already has ${MAX_READERS_PER_WRITER} reader namespaces`,
    );
  }
  await addReaderIndex(context, writer, reader);
  // Touching the writer serialises with the writer turning into a reader itself.
  await writeRecord(context.store, namespacePath(writer), writerFound.record, writerFound.version);
  const record: NamespaceRecord = {
    ...found.record,
    policies: { ...found.record.policies, writerNamespace: writer.toString(), readonly: true },
  };
  const version = await writeRecord(context.store, namespacePath(reader), record, found.version);
  try {
    await touchTopicCounter(context, reader, counter);
  } catch (error) {
    // A topic reservation slipped in before the flip: undo it and let the retry see the topic.
    await writeRecord(context.store, namespacePath(reader), found.record, version);
    throw error;
  }
  await undoUnlessWriterLives(context, reader, writer, previous);
  if (previous !== '') await removeReaderIndex(context, parseNamespace(previous), reader);
  return toNamespaceInfo(reader, { ...found, record, version });
}

/**
 * After the reader names its writer, the writer must still be there and not
 * being deleted: deleteNamespace flags the writer and then looks for readers,
 * this flips the reader and then looks at the writer, so of the two racing at
 * least one sees the other. When the writer is going, the reader is turned
 * back to its previous writer and the writer's refusal is thrown.
 */
async function undoUnlessWriterLives(
  context: AdminContext,
  reader: NamespaceName,
  writer: NamespaceName,
  previous: string,
): Promise<void> {
  try {
    await readNamespace(context, writer);
  } catch (error) {
    await retryOnConflict(`undoing the writer namespace of ${reader.toString()}`, async () => {
      const current = await readNamespace(context, reader, true);
      if (current.record.policies.writerNamespace !== writer.toString()) return;
      const policies = { ...current.record.policies, writerNamespace: previous, readonly: previous !== '' };
      await writeRecord(context.store, namespacePath(reader), { ...current.record, policies }, current.version);
    });
    throw error;
  }
}

async function hasOwnTopics(context: AdminContext, namespace: NamespaceName): Promise<boolean> {
  return (
    (await hasChildren(context.store, partitionedTopicsDir(namespace))) ||
    (await hasChildren(context.store, deletingTopicsDir(namespace)))
  );
}
