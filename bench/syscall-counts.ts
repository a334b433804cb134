// What one message costs in system calls and Redis commands: a process's
// write and read system calls (/proc/<pid>/io: syscw counts write and writev,
// so every socket write libuv makes; syscr every read) and the calls of each
// command a Redis ran (INFO commandstats: the commands a Lua script runs count
// under their own names, beside the EVALSHA that ran them). Read before and
// after a measured stretch; the difference divided by its messages is the
// figure per message.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';

export interface SyscallCounts {
  writes: number;
  reads: number;
}

/** Write and read system calls `pid` made so far, every thread. */
export function syscallCounts(pid: number): SyscallCounts {
  const text = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  return { writes: field('syscw'), reads: field('syscr') };
}

/** Calls of each command the Redis at `url` ran since it started, by command name. */
export async function redisCommandCounts(url: string): Promise<Map<string, number>> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const text = await redis.info('commandstats');
    const counts = new Map<string, number>();
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) counts.set(match[1]!, Number(match[2]));
    return counts;
  } finally {
    redis.disconnect();
  }
}

/** Calls per command between two readings, commands of the reading itself left out, most first. */
export function commandsBetween(before: Map<string, number>, after: Map<string, number>): [string, number][] {
  const reading = new Set(['info', 'client|setname', 'client|setinfo', 'hello', 'select']);
  return [...after]
    .map(([name, calls]): [string, number] => [name, calls - (before.get(name) ?? 0)])
    .filter(([name, calls]) => calls > 0 && !reading.has(name))
    .sort((a, b) => b[1] - a[1]);
}
