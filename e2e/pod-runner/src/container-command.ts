import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { expandReferences } from './container-env.js';
import type { Container } from './manifests.js';
import { PodRunnerReason } from './reasons.js';

/*
 * No container engine runs here, so an image is mapped onto what this
 * machine has: the Ledgerline image onto the app bundles `nx build` writes
 * (dist/apps/<app>/main.js, what the image copies to /app/dist/apps), the
 * redis and nats images onto Debian's redis-server and nats-server. A
 * volume's mount path in an argument becomes the pod's folder for it.
 */

/** The process a container runs as. */
export interface ContainerProcess {
  command: string;
  args: string[];
  cwd: string;
  /** What runs, for people: `dist/apps/metadata/main.js`. */
  describe: string;
}

export interface CommandContext {
  /** The checkout holding dist/apps (the image's /app). */
  root: string;
  /** The container's environment, for $(VAR) in command and args and the image's ${APP}. */
  env: Readonly<Record<string, string>>;
  /** Mount path -> the folder that stands for the volume. */
  mounts: ReadonlyMap<string, string>;
  /** The node binary (process.execPath by default). */
  node?: string;
}

/** An image reference's repository name without registry, path or tag: `registry.example.com/x/redis:7` -> `redis`. */
export function imageName(image: string): string {
  const withoutDigest = image.split('@')[0]!;
  const last = withoutDigest.split('/').pop()!;
  return last.split(':')[0]!;
}

/** Replaces a leading mount path in an argument with the folder that stands for it. */
export function mapMountedPath(arg: string, mounts: ReadonlyMap<string, string>): string {
  for (const [mountPath, folder] of mounts) {
    if (arg === mountPath) return folder;
    if (arg.startsWith(`${mountPath}/`)) return join(folder, arg.slice(mountPath.length + 1));
  }
  return arg;
}

function ledgerlineProcess(container: Container, context: CommandContext): ContainerProcess {
  const node = context.node ?? process.execPath;
  const expand = (arg: string): string => mapMountedPath(expandReferences(arg, context.env), context.mounts);
  // The image's CMD: sh -c 'exec node "dist/apps/${APP}/main.js"' in /app; APP defaults to metadata (its ENV).
  const app = context.env['APP'] ?? 'metadata';
  const given = [...(container.command ?? []), ...(container.args ?? [])].map(expand);
  const [command, ...args] = given.length > 0 ? given : ['node', `dist/apps/${app}/main.js`];
  const resolved = command === 'node' ? node : command!;
  const bundle = args.find((arg) => arg.endsWith('.js'));
  if (bundle !== undefined && !existsSync(isAbsolute(bundle) ? bundle : join(context.root, bundle))) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.BAD_MANIFEST,
      `container ${container.name} runs ${bundle}, which is not built: run 'npx nx run-many -t build' first`,
    );
  }
  return {
    command: resolved,
    args: resolved === node ? ['--enable-source-maps', ...args] : args,
    cwd: context.root,
    describe: [command, ...args].join(' '),
  };
}

function serverProcess(
  container: Container,
  context: CommandContext,
  binary: string,
  defaults: string[],
): ContainerProcess {
  const expand = (arg: string): string => mapMountedPath(expandReferences(arg, context.env), context.mounts);
  // A command replaces the image's entrypoint; our images' entrypoint is the server itself.
  const given = [...(container.command ?? []).slice(1), ...(container.args ?? [])].map(expand);
  const args = dropOverridden([...defaults, ...given], given);
  return { command: binary, args, cwd: context.root, describe: `${binary} ${given.join(' ')}` };
}

/** Drops a default flag (and its value) that the manifest's arguments set too. */
function dropOverridden(args: string[], given: string[]): string[] {
  const defaultsEnd = args.length - given.length;
  const kept: string[] = [];
  for (let index = 0; index < defaultsEnd; index += 2) {
    if (!given.includes(args[index]!)) kept.push(args[index]!, args[index + 1]!);
  }
  return [...kept, ...given];
}

/**
 * The process for `container`. The official redis image is built with
 * protected mode off (Debian's redis-server has it on, which refuses every
 * client but loopback when no password is set), so that is the default here too.
 */
export function containerProcess(container: Container, context: CommandContext): ContainerProcess {
  const name = imageName(container.image);
  if (name === 'ledgerline') return ledgerlineProcess(container, context);
  if (name === 'redis') return serverProcess(container, context, 'redis-server', ['--protected-mode', 'no']);
  if (name === 'nats') return serverProcess(container, context, 'nats-server', []);
  throw new LedgerlineError(
    'FAILED_PRECONDITION',
    PodRunnerReason.BAD_MANIFEST,
    `container ${container.name}: image ${container.image} has no local stand-in (ledgerline, redis and nats do)`,
  );
}
