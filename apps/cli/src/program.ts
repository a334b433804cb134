import { Command, CommanderError, Help } from 'commander';
import { COMMAND_MODULES, type CommandModule } from './command-index.js';
import { CliExit, EXIT_CODES, EXIT_STATUS_HELP, oneLine } from './exit-status.js';
import type { CliIo } from './cli-io.js';
import { addSecurityOptions, DEFAULT_URL } from './global-options.js';

export interface RunCliOptions {
  /** Runs once before a command's module is loaded (not for the top-level help). */
  beforeCommand?: () => Promise<void>;
}

/** The program with its global options and none of its commands yet. */
function baseProgram(io: CliIo): Command {
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
  return program;
}

/**
 * The command the arguments name (after the program's global options, whose
 * values are skipped), or the one `help <command>` asks about.
 */
export function commandNameOf(program: Command, args: readonly string[]): string | undefined {
  const takesValue = new Set(
    program.options.filter((option) => option.required || option.optional).map((option) => option.long),
  );
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return args[i + 1];
    if (arg.startsWith('-')) {
      if (takesValue.has(arg)) i++;
      continue;
    }
    return arg === 'help' ? (commandNameOf(program, args.slice(i + 1)) ?? 'help') : arg;
  }
  return undefined;
}

/**
 * A module's commands as their help line only: enough for `ledgerline --help`,
 * which lists them, without loading what runs them.
 */
function addSummaries(program: Command, module: CommandModule, terms: Map<string, string>): void {
  for (const [name, summary] of Object.entries(module.commands)) {
    program.command(name).description(summary.description);
    terms.set(name, summary.term);
  }
}

/**
 * The `ledgerline` command line, with the module of the command the arguments
 * name loaded and every other command as its help line. Without `argv` (or
 * for a name no module defines, so commander can suggest the nearest) every
 * module is loaded. Command-line mistakes print one line (`error: ...
 * (run with --help for usage)`) and end the parse with a CommanderError
 * instead of exiting, so runCli decides the exit status.
 */
export async function buildProgram(io: CliIo, argv?: readonly string[], options: RunCliOptions = {}): Promise<Command> {
  const program = baseProgram(io);
  const name = argv === undefined ? undefined : commandNameOf(program, argv.slice(2));
  const named = COMMAND_MODULES.find((module) => name !== undefined && module.commands[name] !== undefined);
  const loadEvery = argv === undefined || (name !== undefined && name !== 'help' && named === undefined);
  const terms = new Map<string, string>();
  if (loadEvery || named !== undefined) await options.beforeCommand?.();
  for (const module of COMMAND_MODULES) {
    if (loadEvery || module === named) (await module.load())(program, io);
    else addSummaries(program, module, terms);
  }
  const help = new Help();
  program.configureHelp({ subcommandTerm: (command) => terms.get(command.name()) ?? help.subcommandTerm(command) });
  return program;
}

/**
 * Runs the command line and resolves with its exit status (see EXIT_CODES).
 * A server command resolves once it is listening; the process then lives on.
 */
export async function runCli(io: CliIo, argv: readonly string[], options: RunCliOptions = {}): Promise<number> {
  try {
    await (await buildProgram(io, argv, options)).parseAsync(argv);
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CliExit) return error.exitCode;
    if (!(error instanceof CommanderError)) {
      const { reportError } = await import('./cli-errors.js');
      return reportError(io, error);
    }
    // Commander has already printed what was wrong, or the help asked for (its exit code 0), or the
    // help a bare command group shows instead of running (a mistake).
    return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
}
