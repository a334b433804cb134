import { OwnerRole, type OwnerInfo, type OwnerLoad } from '@ledgerline/proto';
import { Option, type Command } from 'commander';
import { toJson, withAdmin } from '../admin-command.js';
import type { CliIo } from '../cli-io.js';
import { descriptionOf } from '../command-index.js';
import { registerDrainCommand } from './owner-moves.js';

const ROLES: Record<string, OwnerRole> = {
  writer: OwnerRole.WRITER,
  readonly: OwnerRole.READONLY,
  'kafka-gateway': OwnerRole.KAFKA_GATEWAY,
};

function roleName(role: OwnerRole): string {
  return Object.keys(ROLES).find((name) => ROLES[name] === role) ?? 'unknown';
}

/** The figures summed per group: what a balancer compares between groups' members. */
const SUMMED = [
  'topicsOwned',
  'messagesInPerSecond',
  'bytesInPerSecond',
  'messagesOutPerSecond',
  'bytesOutPerSecond',
  'consumers',
  'cpuShare',
] as const;

type Row = { name: string; role: string; address: string; load: OwnerLoad | undefined; reportedAgoMs?: number };

const HEADER = ['INSTANCE', 'ROLE', 'ADDRESS', 'TOPICS', 'MSG/S IN', 'MSG/S OUT', 'KB/S IN', 'KB/S OUT'];
const HEADER_REST = ['CONSUMERS', 'PENDING', 'CPU', 'REPORTED'];

function cells(row: Row): string[] {
  const load = row.load;
  if (load === undefined) return [row.name, row.role, row.address, '-', '-', '-', '-', '-', '-', '-', '-', 'never'];
  return [
    row.name,
    row.role,
    row.address,
    String(load.topicsOwned),
    load.messagesInPerSecond.toFixed(1),
    load.messagesOutPerSecond.toFixed(1),
    (load.bytesInPerSecond / 1024).toFixed(1),
    (load.bytesOutPerSecond / 1024).toFixed(1),
    String(load.consumers),
    row.name === 'total' ? '' : String(load.pendingEntries),
    `${(load.cpuShare * 100).toFixed(0)}%`,
    row.reportedAgoMs === undefined ? '' : `${(row.reportedAgoMs / 1000).toFixed(1)} s ago`,
  ];
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd(),
  );
}

/** The sum of a group's loads (every figure but pending entries and the interval). */
function groupTotal(owners: readonly OwnerInfo[]): OwnerLoad {
  const total = { topicsOwned: 0, consumers: 0, pendingEntries: 0n } as unknown as Record<string, number>;
  for (const figure of SUMMED) total[figure] = 0;
  for (const owner of owners) for (const figure of SUMMED) total[figure]! += Number(owner.load?.[figure] ?? 0);
  return total as unknown as OwnerLoad;
}

/** One table per owner group: a row per instance, then the group's total. */
export function ownersTable(owners: readonly OwnerInfo[], nowMs: number): string[] {
  const groups = new Map<string, OwnerInfo[]>();
  for (const owner of owners) groups.set(owner.group, [...(groups.get(owner.group) ?? []), owner]);
  const lines: string[] = [];
  for (const [group, members] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    members.sort((a, b) => a.instanceId.localeCompare(b.instanceId));
    const rows: Row[] = members.map((owner) => ({
      name: owner.instanceId,
      role: roleName(owner.role),
      address: owner.advertisedAddress,
      load: owner.load,
      ...(owner.load === undefined ? {} : { reportedAgoMs: Math.max(0, nowMs - Number(owner.loadReportedAtMs)) }),
    }));
    rows.push({ name: 'total', role: '', address: '', load: groupTotal(members) });
    if (lines.length > 0) lines.push('');
    lines.push(`group ${group} (${members.length} owner${members.length === 1 ? '' : 's'})`);
    lines.push(...table([[...HEADER, ...HEADER_REST], ...rows.map(cells)]));
  }
  return lines;
}

/** `ledgerline owners list`; an `owners` command of another module adds its own subcommands to the group. */
export function registerOwnersCommands(program: Command, io: CliIo): Command {
  const owners = program.command('owners').description(descriptionOf('owners'));
  owners
    .command('list')
    .description('list the live owners per group with the load each reported with its last keep-alive')
    .option('--group <group>', 'only this owner group')
    .addOption(new Option('--role <role>', 'only owners of this role').choices(Object.keys(ROLES)))
    .option('--json', 'print the owners and their load as JSON', false)
    .action(async (options: { group?: string; role?: string; json: boolean }, command: Command) =>
      withAdmin(io, command, async ({ lookup }) => {
        const role = options.role === undefined ? OwnerRole.UNSPECIFIED : ROLES[options.role]!;
        const { owners: live } = await lookup.listOwners({ group: options.group ?? '', role });
        if (options.json) {
          io.out(toJson(live.map((owner) => ({ ...owner, role: roleName(owner.role) }))));
          return;
        }
        if (live.length === 0) io.out('no live owners');
        for (const line of ownersTable(live, Date.now())) io.out(line);
      }),
    );
  registerDrainCommand(owners, io);
  return owners;
}
