import { LedgerlineError } from '@ledgerline/errors';
import type { Access, AuthActionName } from './method-access.js';
import { SecurityReason } from './security-reason.js';

/** A namespace's permissions and its tenant's admin roles, as the metadata service stores them. */
export interface AuthPolicies {
  permissions: Readonly<Record<string, readonly AuthActionName[]>>;
  tenantAdminRoles: readonly string[];
}

/**
 * Where a service reads permissions: the metadata service from its store,
 * owners over gRPC. NOT_FOUND (no such namespace or tenant) grants nothing.
 */
export interface PolicySource {
  namespacePolicies(namespace: string): Promise<AuthPolicies>;
  /** Admin roles of a tenant; a source that cannot tell leaves it out and only super-users pass tenant-wide checks. */
  tenantAdminRoles?(tenant: string): Promise<readonly string[]>;
}

/** Default bound on how long a permission change takes to reach a service. */
export const DEFAULT_PERMISSION_CACHE_MS = 5_000;
/** Namespaces and tenants whose policies one service remembers. */
export const MAX_CACHED_POLICIES = 10_000;

const NONE: AuthPolicies = { permissions: {}, tenantAdminRoles: [] };

interface Cached<T> {
  value: Promise<T>;
  expiresAtMs: number;
}

/**
 * Remembers policies for ttlMs, so a busy producer costs no metadata read per
 * message; a grant or revoke therefore takes effect within ttlMs. A missing
 * namespace is remembered as granting nothing; any other failure (metadata
 * unreachable) is not remembered and reaches the caller.
 */
export class CachedPolicySource implements PolicySource {
  private readonly namespaces = new Map<string, Cached<AuthPolicies>>();
  private readonly tenants = new Map<string, Cached<readonly string[]>>();
  readonly tenantAdminRoles?: (tenant: string) => Promise<readonly string[]>;

  constructor(
    private readonly source: PolicySource,
    private readonly ttlMs = DEFAULT_PERMISSION_CACHE_MS,
    private readonly now: () => number = Date.now,
  ) {
    const read = source.tenantAdminRoles?.bind(source);
    if (read !== undefined)
      this.tenantAdminRoles = (tenant) => this.cached(this.tenants, tenant, () => read(tenant), []);
  }

  namespacePolicies(namespace: string): Promise<AuthPolicies> {
    return this.cached(this.namespaces, namespace, () => this.source.namespacePolicies(namespace), NONE);
  }

  private cached<T>(cache: Map<string, Cached<T>>, key: string, read: () => Promise<T>, missing: T): Promise<T> {
    const hit = cache.get(key);
    if (hit !== undefined && hit.expiresAtMs > this.now()) return hit.value;
    const value = read().catch((error: unknown) => {
      if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return missing;
      cache.delete(key);
      throw error;
    });
    cache.delete(key);
    cache.set(key, { value, expiresAtMs: this.now() + this.ttlMs });
    if (cache.size > MAX_CACHED_POLICIES) cache.delete(cache.keys().next().value as string);
    return value;
  }
}

/** A namespace or tenant that does not exist grants nothing: refusing it tells no more than refusing any other. */
async function orNothing<T>(read: Promise<T>, nothing: T): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof LedgerlineError && error.code === 'NOT_FOUND') return nothing;
    throw error;
  }
}

function denied(reason: string, message: string, details: Record<string, string>): LedgerlineError {
  return new LedgerlineError('PERMISSION_DENIED', reason, message, { details });
}

/** Reads the tenant's roles directly when the source can (the namespace may not exist yet), else through the namespace. */
async function isTenantAdmin(role: string, access: { tenant: string; namespace?: string }, source: PolicySource) {
  if (source.tenantAdminRoles !== undefined) {
    return (await orNothing(source.tenantAdminRoles(access.tenant), [])).includes(role);
  }
  if (access.namespace === undefined) return false;
  return (await orNothing(source.namespacePolicies(access.namespace), NONE)).tenantAdminRoles.includes(role);
}

async function checkAccess(role: string, access: Access, source: PolicySource): Promise<void> {
  switch (access.kind) {
    case 'none':
      return;
    case 'super-user':
      throw denied(SecurityReason.SUPER_USER_REQUIRED, `role ${role} is not a super-user, which this call needs`, {
        role,
      });
    case 'tenant-admin':
      if (await isTenantAdmin(role, access, source)) return;
      throw denied(
        SecurityReason.TENANT_ADMIN_REQUIRED,
        `role ${role} does not administer tenant ${access.tenant}: add it to the tenant's admin roles, or use a super-user`,
        { role, tenant: access.tenant },
      );
    case 'namespace': {
      const policies = await orNothing(source.namespacePolicies(access.namespace), NONE);
      const granted = policies.permissions[role] ?? [];
      if (access.actions.some((action) => granted.includes(action))) return;
      if (policies.tenantAdminRoles.includes(role)) return;
      const needed = access.actions.join(' or ');
      throw denied(
        SecurityReason.PERMISSION_NOT_GRANTED,
        `role ${role} may not ${needed} on namespace ${access.namespace}: ` +
          `grant it with ledgerline namespaces grant-permission ${access.namespace} --role ${role} --actions ${access.actions[0]}`,
        { role, namespace: access.namespace, action: needed },
      );
    }
  }
}

/**
 * Refuses with PERMISSION_DENIED, naming what is missing, unless `role` may
 * do everything `accesses` lists. Super-users may do everything.
 */
export async function authorizeRole(
  role: string,
  accesses: readonly Access[],
  superUserRoles: readonly string[],
  source: PolicySource | undefined,
): Promise<void> {
  if (superUserRoles.includes(role)) return;
  for (const access of accesses) {
    if (access.kind !== 'none' && access.kind !== 'super-user' && source === undefined) {
      throw denied(
        SecurityReason.SUPER_USER_REQUIRED,
        `this service cannot read permissions, so only super-users may call it (role ${role} is not one)`,
        { role },
      );
    }
    await checkAccess(role, access, source!);
  }
}
