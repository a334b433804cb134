import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type {
  GetNamespaceSummaryResponseSchema,
  ListTenantSummariesResponseSchema,
  NamespaceSummarySchema,
} from '@ledgerline/proto';
import pMap from 'p-map';
import type { Caller } from './caller.js';
import type { ConsoleContext } from './console-context.js';
import { FAN_OUT_CONCURRENCY, MAX_TENANTS } from './limits.js';

type NamespaceSummary = MessageInitShape<typeof NamespaceSummarySchema>;

/** Permissions are a tenant admin's to read: another caller sees the namespace without them. */
async function permissionsOf(context: ConsoleContext, caller: Caller, namespace: string) {
  try {
    const answer = await context.backends.admin.getPermissions({ namespace }, caller.callOptions());
    return { permissions: answer.permissions, permissionsVisible: true };
  } catch (thrown) {
    if (LedgerlineError.from(thrown).code !== 'PERMISSION_DENIED') throw thrown;
    return { permissions: {}, permissionsVisible: false };
  }
}

/** One namespace with its policies, topic count (all buckets) and permissions. */
export async function namespaceSummary(
  context: ConsoleContext,
  caller: Caller,
  namespace: string,
): Promise<NamespaceSummary> {
  const { admin } = context.backends;
  const [info, count, permissions] = await Promise.all([
    admin.getNamespace({ namespace }, caller.callOptions()),
    admin.countTopics({ namespace }, caller.callOptions()),
    permissionsOf(context, caller, namespace),
  ]);
  return {
    name: namespace,
    ...(info.namespace?.policies === undefined ? {} : { policies: info.namespace.policies }),
    createdAtMs: info.namespace?.createdAtMs ?? 0n,
    topicCount: count.count,
    ...permissions,
  };
}

export async function getNamespaceSummary(
  context: ConsoleContext,
  caller: Caller,
  namespace: string,
): Promise<MessageInitShape<typeof GetNamespaceSummaryResponseSchema>> {
  return { namespace: await namespaceSummary(context, caller, namespace) };
}

/**
 * Every tenant (at most MAX_TENANTS) with its admin roles, creation time and
 * namespaces. Listing tenants is a super-user's call in the services, so it
 * is here too. A tenant deleted between the listing and the reads of its
 * details is left out rather than failing the page.
 */
export async function listTenantSummaries(
  context: ConsoleContext,
  caller: Caller,
): Promise<MessageInitShape<typeof ListTenantSummariesResponseSchema>> {
  const { admin } = context.backends;
  const listed = await admin.listTenants({}, caller.callOptions());
  const names = listed.tenants.slice(0, MAX_TENANTS);
  const tenants = await pMap(
    names,
    async (tenant) => {
      const read = await Promise.all([
        admin.getTenant({ tenant }, caller.callOptions()),
        admin.listNamespaces({ tenant }, caller.callOptions()),
      ]).catch((thrown: unknown) => {
        if (LedgerlineError.from(thrown).code === 'NOT_FOUND') return undefined;
        throw thrown;
      });
      if (read === undefined) return undefined;
      const [info, namespaces] = read;
      return {
        name: tenant,
        adminRoles: info.tenant?.adminRoles ?? [],
        createdAtMs: info.tenant?.createdAtMs ?? 0n,
        namespaces: await pMap(namespaces.namespaces, (namespace) => namespaceSummary(context, caller, namespace), {
          concurrency: FAN_OUT_CONCURRENCY,
        }),
      };
    },
    { concurrency: FAN_OUT_CONCURRENCY },
  );
  return {
    tenants: tenants.filter((tenant) => tenant !== undefined),
    truncated: listed.tenants.length > names.length,
  };
}
