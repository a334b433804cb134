import { Command } from 'commander';
import { DEFAULT_URL } from './admin-connection.js';
import type { CliIo } from './cli-io.js';
import { registerNamespaceCommands } from './commands/namespaces-commands.js';
import { registerServerCommands } from './commands/server-commands.js';
import { registerTenantCommands } from './commands/tenants-commands.js';
import { registerTopicCommands } from './commands/topics-commands.js';

/** The `ledgerline` command line. */
export function buildProgram(io: CliIo): Command {
  const program = new Command('ledgerline')
    .description('Ledgerline: the storage side of a Pulsar-style log')
    .option('--url <address>', 'the metadata service for admin commands (host:port; env LEDGERLINE_URL)', DEFAULT_URL)
    .showHelpAfterError();
  registerServerCommands(program, io);
  registerTenantCommands(program, io);
  registerNamespaceCommands(program, io);
  registerTopicCommands(program, io);
  return program;
}
