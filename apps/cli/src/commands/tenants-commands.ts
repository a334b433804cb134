import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { toJson, withAdmin } from '../admin-command.js';
import { descriptionOf } from '../command-index.js';

/** `ledgerline tenants create|get|list|delete`. */
export function registerTenantCommands(program: Command, io: CliIo): void {
  const tenants = program.command('tenants').description(descriptionOf('tenants'));
  tenants
    .command('create <tenant>')
    .description('create a tenant')
    .option('--admin-role <role...>', 'roles allowed to administer the tenant', [])
    .action(async (tenant: string, options: { adminRole: string[] }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        await admin.createTenant({ tenant, adminRoles: options.adminRole });
        io.out(`created tenant ${tenant}`);
      }),
    );
  tenants
    .command('get <tenant>')
    .description('show a tenant, its admin roles and when it was created, as JSON')
    .action(async (tenant: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        io.out(toJson((await admin.getTenant({ tenant })).tenant));
      }),
    );
  tenants
    .command('list')
    .description('list every tenant')
    .action(async (_options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        for (const tenant of (await admin.listTenants({})).tenants) io.out(tenant);
      }),
    );
  tenants
    .command('delete <tenant>')
    .description('delete a tenant that has no namespaces')
    .action(async (tenant: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        await admin.deleteTenant({ tenant });
        io.out(`deleted tenant ${tenant}`);
      }),
    );
}
