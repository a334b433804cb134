import type { Command } from 'commander';
import { GarbageCollectorService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { adminClientOptions, normaliseUrl, openChannel } from '../admin-connection.js';
import { connectionSecurityOf } from '../connection-security.js';
import { CliExit, reportError } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { integerIn, toJson, urlOf } from '../admin-command.js';
import { descriptionOf } from '../command-index.js';

/** The largest --page-size of `gc pending` (the service's own limit). */
const MAX_PENDING_PAGE = 1_000;

/** Runs one call against the garbage collector at --url, with the admin commands' error and exit conventions. */
async function withCollector(
  io: CliIo,
  command: Command,
  action: (collector: Client<typeof GarbageCollectorService>) => Promise<void>,
): Promise<void> {
  const url = normaliseUrl(urlOf(command));
  let client: Client<typeof GarbageCollectorService> | undefined;
  let channel: ReturnType<typeof openChannel> | undefined;
  try {
    const security = connectionSecurityOf(command);
    channel = openChannel(url, security);
    client = createClient(GarbageCollectorService, channel, adminClientOptions(security));
    await action(client);
  } catch (error) {
    if (error instanceof CliExit) throw error;
    throw new CliExit(reportError(io, error, url));
  } finally {
    if (client !== undefined) closeClient(client);
    channel?.close();
  }
}

/** `ledgerline gc status|pending|trigger`: the garbage collector at --url (standalone serves it on its one port). */
export function registerGcCommands(program: Command, io: CliIo): void {
  const gc = program.command('gc').description(descriptionOf('gc'));
  gc.command('status')
    .description("print the collector's counters, shards and oldest pending marker")
    .action(async (_options: unknown, command: Command) =>
      withCollector(io, command, async (collector) => {
        io.out(toJson(await collector.getStatus({})));
      }),
    );
  gc.command('pending')
    .description('list the marked ledgers waiting for deletion, with attempts and last error')
    .option('--page-size <n>', `deletions per page (1 to ${MAX_PENDING_PAGE})`, integerIn(1, MAX_PENDING_PAGE), 100)
    .option('--page-token <token>', 'continue after a previous page', '')
    .action(async (options: { pageSize: number; pageToken: string }, command: Command) =>
      withCollector(io, command, async (collector) => {
        const page = await collector.listPendingDeletions({ pageSize: options.pageSize, pageToken: options.pageToken });
        for (const d of page.deletions) {
          const refused = d.refusedReason === '' ? '' : ` REFUSED ${d.refusedReason}`;
          const error = d.lastError === '' ? '' : ` last error: ${d.lastError}`;
          io.out(`${d.ledgerId} ${d.managedLedgerPath} ${d.component} attempts=${d.attempts}${refused}${error}`);
        }
        if (page.nextPageToken !== '') io.out(`next page: --page-token ${page.nextPageToken}`);
      }),
    );
  gc.command('trigger')
    .description('run a pass now and print what it did')
    .option('--sweep-orphans', 'also sweep orphan ledgers in this pass', false)
    .option('--full-scan', 'also scan every managed ledger for markers the index misses (rate-limited)', false)
    .action(async (options: { sweepOrphans: boolean; fullScan: boolean }, command: Command) =>
      withCollector(io, command, async (collector) => {
        const { report } = await collector.triggerPass({
          sweepOrphans: options.sweepOrphans,
          fullScan: options.fullScan,
        });
        io.out(toJson(report ?? {}));
      }),
    );
}
