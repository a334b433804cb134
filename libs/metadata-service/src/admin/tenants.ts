import { MANAGED_LEDGERS_ROOT, validateTenant, NamingErrorReason } from '@ledgerline/naming';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { isBadVersion, retryOnConflict } from '../records/cas-retry.js';
import { tenantNamespacesDir, tenantPath, TENANTS_DIR } from '../records/layout.js';
import { MAX_ADMIN_ROLE_LENGTH, MAX_ADMIN_ROLES, MAX_LISTED_TENANTS } from '../limits.js';
import { TenantRecordSchema, type TenantRecord } from '../records/records.js';
import { hasChildren, listChildren, readRecord, writeRecord, type VersionedRecord } from '../records/store-records.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

export interface Tenant {
  name: string;
  adminRoles: string[];
  createdAtMs: number;
}

/**
 * Checks a tenant name. Pulsar's characters allow `.` and `..`, which cannot
 * be path segments, so those are refused here with the same reason.
 */
export function parseTenant(name: unknown): string {
  const tenant = validateTenant(name);
  if (tenant === '.' || tenant === '..') {
    throw invalidArgument(NamingErrorReason.INVALID_TENANT_NAME, `tenant ${JSON.stringify(tenant)} is reserved`);
  }
  return tenant;
}

function validateRoles(roles: readonly string[]): string[] {
  if (roles.length > MAX_ADMIN_ROLES) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_ADMIN_ROLES,
      `a tenant has at most ${MAX_ADMIN_ROLES} admin roles, got ${roles.length}`,
    );
  }
  for (const role of roles) {
    if (role.length === 0 || role.length > MAX_ADMIN_ROLE_LENGTH) {
      throw invalidArgument(
        MetadataServiceReason.INVALID_ADMIN_ROLES,
        `an admin role must be 1 to ${MAX_ADMIN_ROLE_LENGTH} characters long`,
      );
    }
  }
  return [...new Set(roles)];
}

export function tenantNotFound(tenant: string): LedgerlineError {
  return new LedgerlineError(
    'NOT_FOUND',
    MetadataServiceReason.TENANT_NOT_FOUND,
    `tenant ${tenant} does not exist; create it first`,
    {
      details: { tenant },
    },
  );
}

export async function createTenant(
  context: AdminContext,
  name: string,
  adminRoles: readonly string[] = [],
): Promise<Tenant> {
  const tenant = parseTenant(name);
  const record: TenantRecord = { adminRoles: validateRoles(adminRoles), createdAtMs: context.now() };
  try {
    await writeRecord(context.store, tenantPath(tenant), record, 'absent');
  } catch (error) {
    if (!isBadVersion(error)) throw error;
    throw new LedgerlineError(
      'ALREADY_EXISTS',
      MetadataServiceReason.TENANT_EXISTS,
      `tenant ${tenant} already exists`,
      {
        details: { tenant },
      },
    );
  }
  return { name: tenant, ...record };
}

export async function readTenant(context: AdminContext, tenant: string): Promise<VersionedRecord<TenantRecord>> {
  const found = await readRecord(context.store, tenantPath(tenant), TenantRecordSchema);
  if (found === undefined) throw tenantNotFound(tenant);
  return found;
}

export async function getTenant(context: AdminContext, name: string): Promise<Tenant> {
  const tenant = parseTenant(name);
  const found = await readTenant(context, tenant);
  return { name: tenant, ...found.record };
}

export async function listTenants(context: AdminContext): Promise<string[]> {
  return (await listChildren(context.store, TENANTS_DIR, MAX_LISTED_TENANTS)).names;
}

/**
 * Deletes a tenant that has no namespaces. The delete is a compare-and-set on
 * the version read before the emptiness check; namespace creation bumps that
 * version (see touchTenant), so a namespace created meanwhile makes the delete
 * retry and then refuse, rather than orphan it.
 */
export async function deleteTenant(context: AdminContext, name: string): Promise<void> {
  const tenant = parseTenant(name);
  await retryOnConflict(`deleting tenant ${tenant}`, async () => {
    const found = await readRecord(context.store, tenantPath(tenant), TenantRecordSchema);
    if (found === undefined) {
      // A delete that died between its two writes left the tenant's empty managed-ledger directory.
      if (!(await hasChildren(context.store, tenantNamespacesDir(tenant))))
        await deleteManagedLedgerDir(context, tenant);
      throw tenantNotFound(tenant);
    }
    if (await hasChildren(context.store, tenantNamespacesDir(tenant))) {
      throw new LedgerlineError(
        'FAILED_PRECONDITION',
        MetadataServiceReason.TENANT_NOT_EMPTY,
        `tenant ${tenant} still has namespaces; delete them first`,
        { details: { tenant } },
      );
    }
    await context.store.delete(tenantPath(tenant), { expectedVersion: found.version });
  });
  await deleteManagedLedgerDir(context, tenant);
}

async function deleteManagedLedgerDir(context: AdminContext, tenant: string): Promise<void> {
  await context.store.delete(`${MANAGED_LEDGERS_ROOT}/${tenant}`);
}

/**
 * Rewrites a tenant record unchanged at the version read, so that a concurrent
 * deleteTenant (which compares on that version) cannot miss a namespace being
 * created. Throws BAD_VERSION when the tenant changed, TENANT_NOT_FOUND when it is gone.
 */
export async function touchTenant(
  context: AdminContext,
  tenant: string,
  read: VersionedRecord<TenantRecord>,
): Promise<void> {
  try {
    await writeRecord(context.store, tenantPath(tenant), read.record, read.version);
  } catch (error) {
    if (isBadVersion(error) && !(await context.store.exists(tenantPath(tenant)))) throw tenantNotFound(tenant);
    throw error;
  }
}
