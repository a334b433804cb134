import { READER_NAMESPACE_READ_CONCURRENCY } from '../limits.js';
import { decodeLocalName, NamespaceName } from '@ledgerline/naming';
import type { AdminContext } from '../admin-context.js';
import { namespacePath, namespaceReaderPath, namespaceReadersDir } from '../records/layout.js';
import { MAX_READERS_PER_WRITER } from '../limits.js';
import { NamespaceRecordSchema, type NamespaceRecord } from '../records/records.js';
import { listChildren, readRecord, writeRecord } from '../records/store-records.js';
import pMap from 'p-map';

/**
 * The reader namespaces of a writer namespace (PIP-63), as an index under the
 * writer: `/admin/namespace-readers/<writer>/<reader>`. The index is a hint
 * written before the reader's record names its writer; the reader's record is
 * the truth, so stale entries are ignored here and removed by the next change.
 */
export interface ReaderNamespace {
  namespace: NamespaceName;
  record: NamespaceRecord;
}

/** The reader namespaces whose record names `writer`, at most MAX_READERS_PER_WRITER. */
export async function readersOf(context: AdminContext, writer: NamespaceName): Promise<ReaderNamespace[]> {
  const { names } = await listChildren(context.store, namespaceReadersDir(writer), MAX_READERS_PER_WRITER);
  const readers = await pMap(
    names,
    async (encoded) => {
      const namespace = NamespaceName.parse(decodeLocalName(encoded));
      const found = await readRecord(context.store, namespacePath(namespace), NamespaceRecordSchema);
      return found === undefined || found.record.deleting || found.record.policies.writerNamespace !== writer.toString()
        ? undefined
        : { namespace, record: found.record };
    },
    { concurrency: READER_NAMESPACE_READ_CONCURRENCY },
  );
  return readers.filter((reader): reader is ReaderNamespace => reader !== undefined);
}

export async function countIndexedReaders(context: AdminContext, writer: NamespaceName): Promise<number> {
  return (await listChildren(context.store, namespaceReadersDir(writer), MAX_READERS_PER_WRITER + 1)).names.length;
}

export async function addReaderIndex(
  context: AdminContext,
  writer: NamespaceName,
  reader: NamespaceName,
): Promise<void> {
  await writeRecord(context.store, namespaceReaderPath(writer, reader), { reader: reader.toString() });
}

export async function removeReaderIndex(
  context: AdminContext,
  writer: NamespaceName,
  reader: NamespaceName,
): Promise<void> {
  await context.store.delete(namespaceReaderPath(writer, reader));
}
