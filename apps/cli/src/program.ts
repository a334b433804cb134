import { Command, CommanderError } from 'commander';
import { addSecurityOptions } from './connection-security.js';
import { DEFAULT_URL } from './admin-connection.js';
import { CliExit, EXIT_CODES, EXIT_STATUS_HELP, oneLine, reportError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { registerClusterCommands } from './commands/cluster-commands.js';
import { registerClientCommands } from './commands/client-commands.js';
import { registerGcCommands } from './commands/gc-commands.js';
import { registerNamespaceCommands } from './commands/namespaces-commands.js';
import { registerSecurityCommands } from './commands/security-commands.js';
import { registerServerCommands } from './commands/server-commands.js';
import { registerTenantCommands } from './commands/tenants-commands.js';
import { registerTopicCommands } from './commands/topics-commands.js';
import { registerPerfCommand } from './perf/perf-command.js';

/**
 * The `ledgerline` command line. Command-line mistakes print one line
 * (`error: ... (run with --help for usage)`) and end the parse with a
 * CommanderError instead of exiting, so runCli decides the exit status.
 */
export function buildProgram(io: CliIo): Command {
  const program = new Command('ledgerline')
    .description('Ledgerline: the storage side of a Pulsar-style log')
    .option(
      '--url <address>',
      'the metadata service (standalone: its port) (host:port; env LEDGERLINE_URL)',
      DEFAULT_URL,
    )
    .addHelpText('after', `\n${EXIT_STATUS_HELP}`)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
      outputError: (text) => io.err(`${oneLine(text)} (run with --help for usage)`),
    });
  addSecurityOptions(program);
  registerServerCommands(program, io);
  registerClusterCommands(program, io);
  registerTenantCommands(program, io);
  registerNamespaceCommands(program, io);
  registerTopicCommands(program, io);
  registerClientCommands(program, io);
  registerPerfCommand(program, io);
  registerGcCommands(program, io);
  registerSecurityCommands(program, io);
  return program;
}

/**
 * Runs the command line and resolves with its exit status (see EXIT_CODES).
 * A server command resolves once it is listening; the process then lives on.
 */
export async function runCli(io: CliIo, argv: readonly string[]): Promise<number> {
  try {
    await buildProgram(io).parseAsync(argv);
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CliExit) return error.exitCode;
    if (!(error instanceof CommanderError)) return reportError(io, error);
    // Commander has already printed what was wrong, or the help asked for (its exit code 0), or the
    // help a bare command group shows instead of running (a mistake).
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
}
