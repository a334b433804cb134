import { Command, CommanderError } from 'commander';
import { action, downPods, registerPodCommands, RUN_DIR, upFromManifests } from './cli.js';
import { CliExit, EXIT_CODES, type CliIo } from './cli-io.js';

/** `up` and `down`: a pod run's start and end. */
function registerRunCommands(program: Command, io: CliIo): void {
  program
    .command('up')
    .description('run a Kustomize overlay as pods until Ctrl-C: a network namespace each, probes, Service names')
    .requiredOption('--from-manifests <overlay>', 'the overlay to run (deploy/overlays/dev)')
    .option(...RUN_DIR)
    .action((options: { fromManifests: string; runDir: string }) =>
      action(io, async (dir) => upFromManifests(io, options.fromManifests, dir))(options),
    );
  program
    .command('down')
    .description('ask the runner of the pod run to delete every pod (as Ctrl-C does), or clean up after a gone one')
    .option(...RUN_DIR)
    .action(action(io, async (dir) => downPods(io, dir)));
}

/**
 * The pod runner's command line: test equipment (root only), apart from the
 * `ledgerline` command. Its mistakes end the parse with a CommanderError
 * instead of exiting, so runPodsCli decides the exit status.
 */
export function podsProgram(io: CliIo): Command {
  const program = new Command('pods')
    .description(
      'Runs the Kubernetes manifests as pods on this machine, without a Kubernetes (root only): `npm run pods -- <command>`',
    )
    .addHelpText('after', '\nExit status: 0 done, 1 failed, 2 bad command line.')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text.replace(/\n$/, '')),
      writeErr: (text) => io.err(text.replace(/\n$/, '')),
    });
  registerRunCommands(program, io);
  registerPodCommands(program, io);
  return program;
}

/** Runs `pods <argv...>` (argv as process.argv: node, the script, then the arguments) and returns the exit status. */
export async function runPodsCli(io: CliIo, argv: readonly string[]): Promise<number> {
  try {
    await podsProgram(io).parseAsync([...argv]);
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CliExit) return error.exitCode;
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    throw error;
  }
}
