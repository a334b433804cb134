import type { GetBalancerStatusResponse } from '@ledgerline/proto';
import type { Command } from 'commander';
import { toJson, withAdmin } from '../admin-command.js';
import type { CliIo } from '../cli-io.js';
import { descriptionOf } from '../command-index.js';

/** The status as lines: the leader and its last round, each group's verdict, the owners' loads, the recent moves. */
export function balancerStatusLines(status: GetBalancerStatusResponse, nowMs: number): string[] {
  if (!status.active)
    return ['no balancer has finished a round yet (is balancerEnabled off on every metadata instance?)'];
  const agoS = ((nowMs - Number(status.lastRoundAtMs)) / 1000).toFixed(1);
  const lines = [
    `leader ${status.leaderId}: round ${status.rounds} ${agoS} s ago, ${status.movesTotal} topic(s) moved in all`,
    ...status.decisions.map((decision) => `  ${decision}`),
    'owners:',
    ...status.owners.map(
      (owner) => `  ${owner.group}/${owner.instanceId}: ${owner.topics} topic(s), load ${owner.load.toFixed(1)}`,
    ),
  ];
  if (status.recentMoves.length > 0) lines.push('recent moves (oldest first):');
  for (const move of status.recentMoves) {
    const at = new Date(Number(move.atMs)).toISOString();
    const paused = move.outcome === 'moved' ? `, paused ${move.pausedMs} ms` : '';
    lines.push(
      `  ${at} ${move.topic} ${move.fromInstanceId} -> ${move.toInstanceId}: ${move.outcome}${paused} (${move.reason})`,
    );
  }
  return lines;
}

/** `ledgerline balancer status [--json]`. */
export function registerBalancerCommands(program: Command, io: CliIo): Command {
  const balancer = program.command('balancer').description(descriptionOf('balancer'));
  balancer
    .command('status')
    .description('what the active balancer saw, decided and did in its last round, and its recent moves')
    .option('--json', 'print the status as JSON', false)
    .action(async (options: { json: boolean }, command: Command) =>
      withAdmin(io, command, async ({ admin }) => {
        const status = await admin.getBalancerStatus({});
        if (options.json) io.out(toJson(status));
        else for (const line of balancerStatusLines(status, Date.now())) io.out(line);
      }),
    );
  return balancer;
}
