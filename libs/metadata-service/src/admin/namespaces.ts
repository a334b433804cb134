import { NamespaceName, topicListingPaths, NamingErrorReason } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { isBadVersion, retryOnConflict } from '../records/cas-retry.js';
import { managedLedgerParentDirs, namespacePath, tenantNamespacesDir } from '../records/layout.js';
import { CREATE_CONCURRENCY, MAX_LISTED_NAMESPACES } from '../limits.js';
import { policiesForCreate, type PolicyInput } from './policies.js';
import { NamespaceRecordSchema, type NamespaceRecord, type PoliciesRecord } from '../records/records.js';
import {
  ensureDirectory,
  listChildren,
  readRecord,
  writeRecord,
  type VersionedRecord,
} from '../records/store-records.js';
import pMap from 'p-map';
import { parseTenant, readTenant, touchTenant } from './tenants.js';
import { createTopicCounter, deleteTopicCounter } from './topic-counter.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

export interface NamespaceInfo {
  name: string;
  policies: PoliciesRecord;
  createdAtMs: number;
  version: number;
}

/** Parses `tenant/ns`, refusing the `.` and `..` segments the store cannot hold. */
export function parseNamespace(name: unknown): NamespaceName {
  const namespace = NamespaceName.parse(name as string);
  parseTenant(namespace.tenant);
  if (namespace.namespace === '.' || namespace.namespace === '..') {
    throw invalidArgument(
      NamingErrorReason.INVALID_NAMESPACE_NAME,
      `namespace ${JSON.stringify(namespace.toString())} is reserved`,
    );
  }
  return namespace;
}

export function namespaceNotFound(namespace: NamespaceName): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    MetadataServiceReason.NAMESPACE_NOT_FOUND,
    `namespace ${namespace.toString()} does not exist`,
    {
      details: { namespace: namespace.toString() },
    },
  );
}

function beingDeleted(namespace: NamespaceName): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    MetadataServiceReason.NAMESPACE_BEING_DELETED,
    `namespace ${namespace.toString()} is being deleted; run the delete again to finish it`,
    { details: { namespace: namespace.toString() } },
  );
}

/** Reads a namespace record. A namespace that is being deleted counts as gone unless `includeDeleting`. */
export async function readNamespace(
  context: AdminContext,
  namespace: NamespaceName,
  includeDeleting = false,
): Promise<VersionedRecord<NamespaceRecord>> {
  const found = await readRecord(context.store, namespacePath(namespace), NamespaceRecordSchema);
  if (found === undefined) throw namespaceNotFound(namespace);
  if (found.record.deleting && !includeDeleting) throw beingDeleted(namespace);
  return found;
}

export function toNamespaceInfo(namespace: NamespaceName, found: VersionedRecord<NamespaceRecord>): NamespaceInfo {
  return {
    name: namespace.toString(),
    policies: found.record.policies,
    createdAtMs: found.record.createdAtMs,
    version: found.version,
  };
}

export async function getNamespace(context: AdminContext, name: string): Promise<NamespaceInfo> {
  const namespace = parseNamespace(name);
  return toNamespaceInfo(namespace, await readNamespace(context, namespace));
}

/**
 * Creates a namespace: its topic counter first (so that no topic can ever be
 * created without one), then the record (create-only: a second creator gets
 * ALREADY_EXISTS), then a touch of the tenant record so a concurrent tenant
 * delete cannot orphan it, then the managed-ledger directories of the PIP-157
 * layout (`persistent` and, with n > 1, `$0` .. `$n-1`).
 */
export async function createNamespaceRecord(
  context: AdminContext,
  namespace: NamespaceName,
  input: PolicyInput | undefined,
): Promise<NamespaceInfo> {
  const policies = policiesForCreate({ ...input, writerNamespace: undefined, readonly: undefined });
  await readTenant(context, namespace.tenant);
  await createTopicCounter(context, namespace);
  const record: NamespaceRecord = { policies, createdAtMs: context.now(), deleting: false, kafkaGroupsIndexed: true };
  let version: number;
  try {
    version = await writeRecord(context.store, namespacePath(namespace), record, 'absent');
  } catch (error) {
    if (!isBadVersion(error)) throw error;
    throw new LedgerlineError(
      'ALREADY_EXISTS',
      MetadataServiceReason.NAMESPACE_EXISTS,
      `namespace ${namespace.toString()} already exists`,
      {
        details: { namespace: namespace.toString() },
      },
    );
  }
  try {
    await retryOnConflict(`creating namespace ${namespace.toString()}`, async () =>
      touchTenant(context, namespace.tenant, await readTenant(context, namespace.tenant)),
    );
  } catch (error) {
    await context.store.delete(namespacePath(namespace), { expectedVersion: version });
    await deleteTopicCounter(context, namespace);
    throw error;
  }
  await createManagedLedgerDirectories(context, namespace, policies.numberOfTopicBuckets);
  return { name: namespace.toString(), policies, createdAtMs: record.createdAtMs, version };
}

async function createManagedLedgerDirectories(context: AdminContext, namespace: NamespaceName, buckets: number) {
  for (const dir of managedLedgerParentDirs(namespace)) await ensureDirectory(context.store, dir);
  if (buckets > 1) {
    const bucketDirs = topicListingPaths(namespace, buckets);
    await pMap(bucketDirs, (dir) => ensureDirectory(context.store, dir), { concurrency: CREATE_CONCURRENCY });
  }
}

export async function listNamespaces(context: AdminContext, tenantName: string): Promise<string[]> {
  const tenant = parseTenant(tenantName);
  await readTenant(context, tenant);
  const { names } = await listChildren(context.store, tenantNamespacesDir(tenant), MAX_LISTED_NAMESPACES);
  return names.map((name) => `${tenant}/${name}`);
}
