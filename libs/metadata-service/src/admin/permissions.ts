import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { retryOnConflict } from '../records/cas-retry.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { namespacePath } from '../records/layout.js';
import { MAX_ADMIN_ROLE_LENGTH, MAX_NAMESPACE_PERMISSION_ROLES } from '../limits.js';
import { parseNamespace, readNamespace } from './namespaces.js';
import { AuthActionSchema, type AuthActionName, type NamespaceRecord } from '../records/records.js';
import { writeRecord } from '../records/store-records.js';
import type { PolicySource } from '@ledgerline/security';
import { getTenant, readTenant } from './tenants.js';

/** role -> the actions it may take on the namespace's topics. */
export type NamespacePermissions = Record<string, AuthActionName[]>;

export interface AuthPolicies {
  permissions: NamespacePermissions;
  /** Roles that administer the namespace's tenant (and so the namespace). */
  tenantAdminRoles: string[];
}

function checkRole(role: unknown): string {
  if (typeof role !== 'string' || role.length === 0 || role.length > MAX_ADMIN_ROLE_LENGTH) {
    throw invalidArgument(
      MetadataServiceReason.INVALID_PERMISSION,
      `a role must be 1 to ${MAX_ADMIN_ROLE_LENGTH} characters long`,
    );
  }
  return role;
}

function checkActions(actions: readonly string[]): AuthActionName[] {
  if (actions.length === 0) {
    throw invalidArgument(MetadataServiceReason.INVALID_PERMISSION, 'grant at least one action: produce, consume');
  }
  return actions.map((action) => {
    const parsed = AuthActionSchema.safeParse(action);
    if (!parsed.success) {
      throw invalidArgument(
        MetadataServiceReason.INVALID_PERMISSION,
        `unknown action ${JSON.stringify(action.slice(0, 40))}; the actions are produce and consume`,
      );
    }
    return parsed.data;
  });
}

async function changePermissions(
  context: AdminContext,
  name: string,
  change: (current: NamespacePermissions) => NamespacePermissions,
): Promise<NamespacePermissions> {
  const namespace = parseNamespace(name);
  return retryOnConflict(`changing the permissions of ${namespace.toString()}`, async () => {
    const found = await readNamespace(context, namespace);
    const permissions = change({ ...(found.record.permissions ?? {}) });
    if (Object.keys(permissions).length > MAX_NAMESPACE_PERMISSION_ROLES) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        MetadataServiceReason.INVALID_PERMISSION,
        `a namespace grants permissions to at most ${MAX_NAMESPACE_PERMISSION_ROLES} roles; revoke some first`,
      );
    }
    const record: NamespaceRecord = { ...found.record, permissions };
    await writeRecord(context.store, namespacePath(namespace), record, found.version);
    return permissions;
  });
}

/** Adds `actions` to what `role` may do on the namespace's topics. */
export function grantPermission(
  context: AdminContext,
  namespace: string,
  role: string,
  actions: readonly string[],
): Promise<NamespacePermissions> {
  const checkedRole = checkRole(role);
  const checkedActions = checkActions(actions);
  return changePermissions(context, namespace, (current) => ({
    ...current,
    [checkedRole]: [...new Set([...(current[checkedRole] ?? []), ...checkedActions])].sort(),
  }));
}

/** Takes every permission of `role` on the namespace away (a role that had none is not an error). */
export function revokePermission(
  context: AdminContext,
  namespace: string,
  role: string,
): Promise<NamespacePermissions> {
  const checkedRole = checkRole(role);
  return changePermissions(context, namespace, (current) => {
    delete current[checkedRole];
    return current;
  });
}

/** The namespace's permissions and its tenant's admin roles. */
export async function getAuthPolicies(context: AdminContext, name: string): Promise<AuthPolicies> {
  const namespace = parseNamespace(name);
  const [found, tenant] = await Promise.all([readNamespace(context, namespace), readTenant(context, namespace.tenant)]);
  return { permissions: found.record.permissions ?? {}, tenantAdminRoles: tenant.record.adminRoles };
}

/** Permissions read straight from the store, for the service that owns it (and standalone, which hosts it). */
export function storePolicySource(context: AdminContext): PolicySource {
  return {
    namespacePolicies: (namespace) => getAuthPolicies(context, namespace),
    tenantAdminRoles: async (tenant) => (await getTenant(context, tenant)).adminRoles,
  };
}
