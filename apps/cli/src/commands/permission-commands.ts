import { AuthAction, type RolePermissions } from '@ledgerline/proto';
import { InvalidArgumentError, type Command } from 'commander';
import { withAdmin } from '../admin-command.js';
import type { CliIo } from '../cli-io.js';

const ACTIONS: Record<string, AuthAction> = { produce: AuthAction.PRODUCE, consume: AuthAction.CONSUME };
const NAMES = new Map<AuthAction, string>([
  [AuthAction.PRODUCE, 'produce'],
  [AuthAction.CONSUME, 'consume'],
]);

/** `--actions produce,consume` (Pulsar's form) or `--actions produce consume`. */
function parseActions(value: string, previous: AuthAction[] = []): AuthAction[] {
  const actions = value
    .split(',')
    .map((action) => action.trim())
    .filter((action) => action !== '');
  for (const action of actions) {
    if (ACTIONS[action] === undefined) throw new InvalidArgumentError('the actions are produce and consume.');
  }
  return [...previous, ...actions.map((action) => ACTIONS[action]!)];
}

function printPermissions(io: CliIo, permissions: Record<string, RolePermissions>): void {
  const roles = Object.keys(permissions).sort();
  if (roles.length === 0) io.out('(no permissions granted)');
  for (const role of roles) {
    io.out(`${role}: ${permissions[role]!.actions.map((action) => NAMES.get(action) ?? String(action)).join(', ')}`);
  }
}

/** `ledgerline namespaces grant-permission | revoke-permission | permissions`, Pulsar's namespace permission commands. */
export function registerPermissionCommands(namespaces: Command, io: CliIo): void {
  namespaces
    .command('grant-permission <namespace>')
    .description('let a role produce and/or consume on every topic of the namespace (added to what it has)')
    .requiredOption('--role <role>', 'the role (the sub claim of its tokens)')
    .requiredOption('--actions <actions...>', 'produce, consume, or both (comma- or space-separated)', parseActions)
    .action(async (namespace: string, options: { role: string; actions: AuthAction[] }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const answer = await admin.grantPermission({ namespace, role: options.role, actions: options.actions });
        io.out(
          `granted ${options.actions.map((action) => NAMES.get(action)).join(', ')} on ${namespace} to ${options.role}`,
        );
        printPermissions(io, answer.permissions);
      }),
    );
  namespaces
    .command('revoke-permission <namespace>')
    .description('take every permission of a role on the namespace away')
    .requiredOption('--role <role>', 'the role')
    .action(async (namespace: string, options: { role: string }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const answer = await admin.revokePermission({ namespace, role: options.role });
        io.out(`revoked the permissions of ${options.role} on ${namespace}`);
        printPermissions(io, answer.permissions);
      }),
    );
  namespaces
    .command('permissions <namespace>')
    .description("list the roles granted permissions on the namespace, and the tenant's admin roles")
    .action(async (namespace: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const answer = await admin.getPermissions({ namespace });
        printPermissions(io, answer.permissions);
        io.out(`tenant admin roles: ${answer.tenantAdminRoles.join(', ') || '(none)'}`);
      }),
    );
}
