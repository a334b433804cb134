import { AuthAction, type AdminService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';
import type { AuthPolicies, PolicySource } from './authorization.js';
import type { AuthActionName } from './method-access.js';

const NAMES: Partial<Record<AuthAction, AuthActionName>> = {
  [AuthAction.PRODUCE]: 'produce',
  [AuthAction.CONSUME]: 'consume',
};

/**
 * Policies read from the metadata service's GetPermissions, for services that
 * reach metadata over gRPC (owners). `admin` is resolved on each read, so a
 * client connected after start-up is used.
 */
export function grpcPolicySource(admin: () => Client<typeof AdminService>): PolicySource {
  return {
    async namespacePolicies(namespace): Promise<AuthPolicies> {
      const answer = await admin().getPermissions({ namespace });
      const permissions = Object.fromEntries(
        Object.entries(answer.permissions).map(([role, granted]) => [
          role,
          granted.actions.flatMap((action) => NAMES[action] ?? []),
        ]),
      );
      return { permissions, tenantAdminRoles: answer.tenantAdminRoles };
    },
  };
}
