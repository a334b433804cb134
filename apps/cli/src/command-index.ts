import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';

/** Adds one module's commands to the program. */
export type RegisterCommands = (program: Command, io: CliIo) => void;

/** A top-level command as `ledgerline --help` lists it. */
export interface CommandSummary {
  /** How the help names it: its name, then `[options]` and its arguments as commander prints them. */
  readonly term: string;
  readonly description: string;
}

/**
 * The modules that define the commands, each loaded only when one of its
 * commands runs (or asks for its help): loading every module pulls in gRPC,
 * the SDK, the stores and the certificate code, which is most of a start's
 * cost, and `ledgerline --help` needs none of them.
 */
export interface CommandModule {
  readonly commands: Readonly<Record<string, CommandSummary>>;
  load(): Promise<RegisterCommands>;
}

export const COMMAND_MODULES: readonly CommandModule[] = [
  {
    commands: {
      standalone: {
        term: 'standalone',
        description: 'run Ledgerline in this process: embedded SQLite under ./data, in-process bus, one gRPC port',
      },
      metadata: {
        term: 'metadata',
        description:
          'run the metadata service of a cluster (LEDGERLINE_REDIS_URL, LEDGERLINE_NATS_URL), as apps/metadata does',
      },
    },
    load: async () => (await import('./commands/server-commands.js')).registerServerCommands,
  },
  {
    commands: { cluster: { term: 'cluster', description: 'a cluster on this machine: every service its own process' } },
    load: async () => (await import('./commands/cluster-commands.js')).registerClusterCommands,
  },
  {
    commands: { tenants: { term: 'tenants', description: 'manage tenants' } },
    load: async () => (await import('./commands/tenants-commands.js')).registerTenantCommands,
  },
  {
    commands: { namespaces: { term: 'namespaces', description: 'manage namespaces and their policies' } },
    load: async () => (await import('./commands/namespaces-commands.js')).registerNamespaceCommands,
  },
  {
    commands: { topics: { term: 'topics', description: 'manage topics' } },
    load: async () => (await import('./commands/topics-commands.js')).registerTopicCommands,
  },
  {
    commands: {
      produce: {
        term: 'produce [options] <topic>',
        description: 'send messages: -m text, -f file, or one per line from stdin',
      },
      consume: {
        term: 'consume [options] <topic>',
        description: 'receive and acknowledge messages of a subscription, one per line',
      },
      read: {
        term: 'read [options] <topic>',
        description: 'read messages from an offset or a time, without a subscription',
      },
    },
    load: async () => (await import('./commands/client-commands.js')).registerClientCommands,
  },
  {
    commands: {
      perf: {
        term: 'perf [options] <mode> <topic>',
        description:
          'measure: produce (send latency), consume (publish-to-receive latency), e2e (send-to-receive latency); ' +
          'a line every second, then a summary',
      },
    },
    load: async () => (await import('./perf/perf-command.js')).registerPerfCommand,
  },
  {
    commands: { owners: { term: 'owners', description: 'owner instances per group and the load each reports' } },
    load: async () => (await import('./commands/owners-commands.js')).registerOwnersCommands,
  },
  {
    commands: { balancer: { term: 'balancer', description: 'the balancer: what it saw, decided and did' } },
    load: async () => (await import('./commands/balancer-commands.js')).registerBalancerCommands,
  },
  {
    commands: { gc: { term: 'gc', description: 'the garbage collector: status, pending deletions, passes' } },
    load: async () => (await import('./commands/gc-commands.js')).registerGcCommands,
  },
  {
    commands: {
      certs: { term: 'certs', description: 'TLS certificates' },
      tokens: { term: 'tokens', description: 'bearer tokens (JWT)' },
    },
    load: async () => (await import('./commands/security-commands.js')).registerSecurityCommands,
  },
];

/** The description of a top-level command, for the module that defines it. */
export function descriptionOf(name: string): string {
  for (const module of COMMAND_MODULES) {
    const summary = module.commands[name];
    if (summary !== undefined) return summary.description;
  }
  throw new Error(`no top-level command ${name} in COMMAND_MODULES`);
}
