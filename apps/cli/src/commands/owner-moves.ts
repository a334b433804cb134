import { OwnerControlService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import type { Command } from 'commander';
import { adminClientOptions, openChannel, type AdminConnection } from '../admin-connection.js';
import { withAdmin } from '../admin-command.js';
import { usageError, CliReason } from '../cli-errors.js';
import type { CliIo } from '../cli-io.js';
import { connectionSecurityOf } from '../connection-security.js';

/** A transfer or a drain may take a while: each topic's move is bounded by the owner's transferTimeoutMs. */
const MOVE_DEADLINE_MS = 600_000;

/** Runs `action` with the OwnerControlService of the owner at `address`, over the command's security settings. */
async function withOwnerControl<T>(
  command: Command,
  address: string,
  action: (control: Client<typeof OwnerControlService>) => Promise<T>,
): Promise<T> {
  const security = connectionSecurityOf(command);
  const channel = openChannel(address, security);
  const control = createClient(OwnerControlService, channel, adminClientOptions(security));
  try {
    return await action(control);
  } finally {
    closeClient(control);
    channel.close();
  }
}

/** The live owner named by instance id or by advertised address. */
async function findOwner(connection: AdminConnection, named: string) {
  const { owners } = await connection.lookup.listOwners({ group: '' });
  const owner = owners.find((each) => each.instanceId === named || each.advertisedAddress === named);
  if (owner === undefined) {
    throw usageError(
      CliReason.UNKNOWN_OWNER,
      `no live owner is registered as ${named}: give an instance id or address that \`ledgerline owners list\` shows`,
    );
  }
  return owner;
}

/** `ledgerline topics transfer <topic> [--to <instance>]`. */
export function registerTransferCommand(topics: Command, io: CliIo): void {
  topics
    .command('transfer <topic>')
    .description(
      'move a topic to another owner without a stall: its clients are sent straight there (--to an instance ' +
        'id or address; without it the placement picks one)',
    )
    .option('--to <instance>', 'the owner to move the topic to')
    .action(async (topic: string, options: { to?: string }, command: Command) =>
      withAdmin(io, command, async (connection) => {
        const targetInstanceId = options.to === undefined ? '' : (await findOwner(connection, options.to)).instanceId;
        const { advertisedAddress } = await connection.lookup.lookupTopic({ topic });
        const moved = await withOwnerControl(command, advertisedAddress, (control) =>
          control.transferTopic({ topic, targetInstanceId }, { deadlineMs: MOVE_DEADLINE_MS }),
        );
        io.out(`moved ${topic} to ${moved.targetInstanceId} (${moved.targetAddress}); paused ${moved.pausedMs} ms`);
      }),
    );
}

/** `ledgerline owners drain <instance> [--resume]`. */
export function registerDrainCommand(owners: Command, io: CliIo): void {
  owners
    .command('drain <instance>')
    .description(
      'move every topic off an owner and place no new topic on it, for maintenance (--resume takes topics again)',
    )
    .option('--resume', 'end the drain: the owner takes topics again', false)
    .action(async (instance: string, options: { resume: boolean }, command: Command) =>
      withAdmin(io, command, async (connection) => {
        const owner = await findOwner(connection, instance);
        const outcome = await withOwnerControl(command, owner.advertisedAddress, (control) =>
          control.drainOwner({ resume: options.resume }, { deadlineMs: MOVE_DEADLINE_MS }),
        );
        io.out(
          options.resume
            ? `${owner.instanceId} takes topics again`
            : `drained ${owner.instanceId}: ${outcome.transferred} topic(s) moved, ${outcome.unloaded} unloaded`,
        );
      }),
    );
}
