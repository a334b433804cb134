import { OwnerRole } from '@ledgerline/proto';
import { MAX_CREATE_BATCH, MAX_PARTITIONS, MAX_TOPIC_PAGE } from '@ledgerline/metadata-service';
import type { Command } from 'commander';
import { CliExit, EXIT_CODES } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { withClient } from '../client-connection.js';
import { integerIn, toJson, withAdmin } from '../admin-command.js';
import { createInBatches, generatedNames, namesFromFile } from './topic-bulk.js';
import { descriptionOf } from '../command-index.js';
import { registerTransferCommand } from './owner-moves.js';

/** The most topics `create-many` makes in one run. */
const MAX_BULK_TOPICS = 10_000_000;

interface CreateManyOptions {
  count?: number;
  prefix: string;
  start: number;
  fromFile?: string;
  batchSize: number;
  concurrency: number;
}

function registerCreateMany(topics: Command, io: CliIo): void {
  topics
    .command('create-many <namespace>')
    .description('create many topics in batches, with a progress bar: --count N names <prefix><n>, or --from-file')
    .option('--count <n>', 'how many topics to create', integerIn(1, MAX_BULK_TOPICS))
    .option('--prefix <prefix>', 'local-name prefix of generated topics', 'topic-')
    .option('--start <n>', 'first number of generated topics', integerIn(0, Number.MAX_SAFE_INTEGER), 0)
    .option('--from-file <path>', 'topic names, one per line (bare names go into <namespace>)')
    .option('--batch-size <n>', 'topics per CreateTopics call', integerIn(1, MAX_CREATE_BATCH), 1000)
    .option('--concurrency <n>', 'calls in flight at once', integerIn(1, 64), 4)
    .action(async (namespace: string, options: CreateManyOptions, command: Command) => {
      if ((options.count === undefined) === (options.fromFile === undefined)) {
        command.error('error: give exactly one of --count and --from-file', { code: 'ledgerline.usage' });
      }
      await withAdmin(io, command, async ({ admin }) => {
        const names =
          options.fromFile === undefined
            ? generatedNames(namespace, options.prefix, options.start, options.count!)
            : namesFromFile(options.fromFile, namespace).slice(0, MAX_BULK_TOPICS);
        const began = Date.now();
        const summary = await createInBatches(io, admin, names, options);
        const seconds = Math.max(0.001, (Date.now() - began) / 1000);
        io.out(
          `created ${summary.created}, already existed ${summary.existed}, failed ${names.length - summary.created - summary.existed} (${Math.round(summary.created / seconds)} topics/s)`,
        );
        if (summary.failed.size > 0) {
          for (const [reason, count] of summary.failed) io.err(`error: ${count} topic(s) failed with ${reason}`);
          io.err(`  first failure: ${summary.firstFailure}`);
          throw new CliExit(EXIT_CODES.failed);
        }
      });
    });
}

function registerOwnerCommands(topics: Command, io: CliIo): void {
  topics
    .command('stats <topic>')
    .description("show a topic's statistics as JSON (one object per partition), from its owner")
    .action(async (topic: string, _options: unknown, command: Command) =>
      withClient(io, command, async (client) => {
        const stats = await client.topicStats(topic);
        io.out(
          toJson(
            stats.length === 1 ? stats[0]!.stats : Object.fromEntries(stats.map((each) => [each.topic, each.stats])),
          ),
        );
      }),
    );
  topics
    .command('unload <topic>')
    .description('unload a topic from its owner (each partition); the next lookup picks an owner afresh')
    .action(async (topic: string, _options: unknown, command: Command) =>
      withClient(io, command, async (client) => {
        await client.unloadTopic(topic);
        io.out(`unloaded ${topic}`);
      }),
    );
}

/** `ledgerline topics update-partitioned-topic`: a partitioned topic gains partitions (Pulsar's command of that name). */
function registerUpdatePartitions(topics: Command, io: CliIo): void {
  topics
    .command('update-partitioned-topic <topic>')
    .description('grow a partitioned topic to more partitions; the ones it has are left as they are')
    .requiredOption('--partitions <n>', 'the new partition count, more than now', integerIn(1, MAX_PARTITIONS))
    .option('--validate-only', 'check the change without making it', false)
    .action(async (topic: string, options: { partitions: number; validateOnly: boolean }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const { topic: grown } = await admin.updatePartitionedTopic({
          topic,
          partitions: options.partitions,
          validateOnly: options.validateOnly,
        });
        io.out(
          `${options.validateOnly ? 'would update' : 'updated'} ${grown!.name} to ${grown!.partitions} partitions`,
        );
      }),
    );
}

/** `ledgerline topics create|create-many|update-partitioned-topic|get|list|count|delete|lookup|stats|unload|transfer`. */
export function registerTopicCommands(program: Command, io: CliIo): void {
  const topics = program.command('topics').description(descriptionOf('topics'));
  topics
    .command('create <topic>')
    .description('create a topic (persistent://tenant/ns/name or tenant/ns/name)')
    .option('--partitions <n>', 'create a partitioned topic with n partitions', integerIn(0, MAX_PARTITIONS), 0)
    .action(async (topic: string, options: { partitions: number }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const created = (await admin.createTopic({ topic, partitions: options.partitions })).topic!;
        io.out(
          created.partitions > 0
            ? `created ${created.name} with ${created.partitions} partitions`
            : `created ${created.name} at ${created.managedLedgerPath}`,
        );
      }),
    );
  registerCreateMany(topics, io);
  registerUpdatePartitions(topics, io);
  registerOwnerCommands(topics, io);
  registerTransferCommand(topics, io);
  topics
    .command('get <topic>')
    .description('show a topic as JSON')
    .action(async (topic: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => io.out(toJson((await admin.getTopic({ topic })).topic))),
    );
  topics
    .command('list <namespace>')
    .description("list a namespace's topics (all buckets, sorted), one per line")
    .option('--page-size <n>', 'topics per ListTopics call', integerIn(1, MAX_TOPIC_PAGE), 1000)
    .action(async (namespace: string, options: { pageSize: number }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        let pageToken = '';
        do {
          const page = await admin.listTopics({ namespace, pageToken, pageSize: options.pageSize });
          for (const topic of page.topics) io.out(topic);
          pageToken = page.nextPageToken;
        } while (pageToken !== '');
      }),
    );
  topics
    .command('count <namespace>')
    .description("count a namespace's topics (each partition counts)")
    .action(async (namespace: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => io.out(String((await admin.countTopics({ namespace })).count))),
    );
  topics
    .command('delete <topic>')
    .description('delete a topic; its ledgers are marked for the garbage collector')
    .action(async (topic: string, _options: unknown, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const { deletableLedgerIds } = await admin.deleteTopic({ topic });
        io.out(`deleted ${topic} (${deletableLedgerIds.length} ledger(s) marked for deletion)`);
      }),
    );
  topics
    .command('lookup <topic>')
    .description('show which owner instance serves a topic')
    .option('--group <group>', 'the owner group the client connects through (PIP-63 reader groups)', '')
    .action(async (topic: string, options: { group: string }, command: Command) =>
      withAdmin(io, command, async ({ lookup }) => {
        const answer = await lookup.lookupTopic({ topic, group: options.group });
        io.out(`owner: ${answer.instanceId}`);
        io.out(`address: ${answer.advertisedAddress}`);
        io.out(`role: ${answer.role === OwnerRole.READONLY ? 'readonly' : 'writer'}`);
        io.out(`owned: ${answer.owned}`);
        if (answer.redirectTopic !== '') io.out(`redirect topic: ${answer.redirectTopic}`);
      }),
    );
}
