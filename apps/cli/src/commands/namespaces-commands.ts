import type { MessageInitShape } from '@bufbuild/protobuf';
import { MAX_NAMESPACE_TOPIC_BUCKETS, MAX_TOPICS_POLICY } from '@ledgerline/metadata-service';
import type { PoliciesSchema } from '@ledgerline/proto';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { booleanValue, integerIn, toJson, withAdmin } from '../admin-command.js';
import { registerPermissionCommands } from './permission-commands.js';
import { descriptionOf } from '../command-index.js';

interface PolicyOptions {
  topicBuckets?: number;
  maxTopics?: number;
  retentionMinutes?: number;
  retentionMb?: number;
  ownerGroup?: string;
  writerNamespace?: string;
  allowAutoTopicCreation?: boolean;
}

function addPolicyOptions(command: Command): Command {
  return command
    .option(
      '--topic-buckets <n>',
      'numberOfTopicBuckets (PIP-157), fixed at creation',
      integerIn(1, MAX_NAMESPACE_TOPIC_BUCKETS),
    )
    .option(
      '--max-topics <n>',
      'most topics in the namespace, each partition counting; 0 = unlimited',
      integerIn(0, MAX_TOPICS_POLICY),
    )
    .option('--retention-minutes <n>', 'retention time; -1 = infinite', integerIn(-1, Number.MAX_SAFE_INTEGER))
    .option('--retention-mb <n>', 'retention size; -1 = infinite', integerIn(-1, Number.MAX_SAFE_INTEGER))
    .option('--owner-group <group>', 'the owner group (isolation policy) whose instances own the topics')
    .option(
      '--allow-auto-topic-creation <true|false>',
      'a lookup (or the Kafka gateway) of a topic that does not exist creates it; default false',
      booleanValue,
    );
}

function policies(options: PolicyOptions): MessageInitShape<typeof PoliciesSchema> {
  return {
    ...(options.topicBuckets === undefined ? {} : { numberOfTopicBuckets: options.topicBuckets }),
    ...(options.maxTopics === undefined ? {} : { maxTopics: options.maxTopics }),
    ...(options.retentionMinutes === undefined ? {} : { retentionTimeMinutes: BigInt(options.retentionMinutes) }),
    ...(options.retentionMb === undefined ? {} : { retentionSizeMb: BigInt(options.retentionMb) }),
    ...(options.ownerGroup === undefined ? {} : { ownerGroup: options.ownerGroup }),
    ...(options.writerNamespace === undefined ? {} : { writerNamespace: options.writerNamespace }),
    ...(options.allowAutoTopicCreation === undefined ? {} : { allowAutoTopicCreation: options.allowAutoTopicCreation }),
  };
}

/** `ledgerline namespaces create|get|update|set-writer-namespace|list|delete`. */
export function registerNamespaceCommands(program: Command, io: CliIo): void {
  const namespaces = program.command('namespaces').description(descriptionOf('namespaces'));
  addPolicyOptions(namespaces.command('create <namespace>').description('create a namespace (tenant/namespace)'))
    .option('--writer-namespace <namespace>', 'create it as a read-only reader of this writer namespace (PIP-63)')
    .action(async (namespace: string, options: PolicyOptions, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const created = await admin.createNamespace({ namespace, policies: policies(options) });
        io.out(
          `created namespace ${namespace} with ${created.namespace?.policies?.numberOfTopicBuckets} topic bucket(s)`,
        );
      }),
    );
  addPolicyOptions(
    namespaces.command('update <namespace>').description('change the policies given (the bucket count cannot change)'),
  ).action(async (namespace: string, options: PolicyOptions, command: Command) =>
    withAdmin(io, command, async ({ admin }) => {
      const updated = await admin.updateNamespace({ namespace, policies: policies(options) });
      io.out(toJson(updated.namespace));
    }),
  );
  namespaces
    .command('set-writer-namespace <reader> <writer>')
    .description('make <reader> a read-only mirror of <writer> (PIP-63); an empty <writer> ("") undoes it')
    .action(async (reader: string, writer: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        await admin.setWriterNamespace({ namespace: reader, writerNamespace: writer });
        io.out(
          writer === '' ? `${reader} is no longer a reader namespace` : `${reader} now mirrors ${writer} (read-only)`,
        );
      }),
    );
  namespaces
    .command('get <namespace>')
    .description('show a namespace and its policies as JSON')
    .action(async (namespace: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        io.out(toJson((await admin.getNamespace({ namespace })).namespace));
      }),
    );
  namespaces
    .command('list <tenant>')
    .description("list a tenant's namespaces")
    .action(async (tenant: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        for (const namespace of (await admin.listNamespaces({ tenant })).namespaces) io.out(namespace);
      }),
    );
  namespaces
    .command('delete <namespace>')
    .description('delete a namespace that has no topics')
    .action(async (namespace: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        await admin.deleteNamespace({ namespace });
        io.out(`deleted namespace ${namespace}`);
      }),
    );
  registerPermissionCommands(namespaces, io);
}
