import { spawnSync } from 'node:child_process';
import type { PodRunner } from '../pod-runner.js';

/** A ledger as the dev overlay's Redis holds it: its id, whether it is fenced, and the topic its owner tags name. */
export interface StoredLedger {
  ledgerId: string;
  fenced: boolean;
  topic: string;
}

/**
 * Runs redis-cli inside the Redis pod (the store is reached as the services reach it), with `input`
 * as commands on its stdin, one per line. It blocks the test process, whose event loop runs the
 * Service proxies, so a listing is two calls, not one per ledger.
 */
function redisCli(runner: PodRunner, args: readonly string[], input?: string): string {
  const netns = runner.pod('redis-0').plan.netns;
  const ran = spawnSync('ip', ['netns', 'exec', netns, 'redis-cli', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  // An empty answer from a call that failed would read as "no ledgers" and pass every check on them.
  if (ran.error !== undefined || ran.status !== 0) {
    throw new Error(`redis-cli ${args.join(' ')} in ${netns} failed: ${String(ran.error ?? ran.stderr)}`);
  }
  return ran.stdout;
}

function topicOf(tags: string): string {
  try {
    return (JSON.parse(tags) as Record<string, string>)['ledgerline/topic'] ?? '';
  } catch {
    return '';
  }
}

/** Every ledger in the ledger store, read with redis-cli (`{ledger:<id>}:meta` hashes). */
export function storedLedgers(runner: PodRunner): StoredLedger[] {
  const keys = redisCli(runner, ['--scan', '--pattern', '*:meta'])
    .split('\n')
    .map((key) => key.trim())
    .filter((key) => key.includes('{ledger:'));
  if (keys.length === 0) return [];
  // Two lines per key, in order: fenced, tags (empty for a ledger deleted since the scan).
  const replies = redisCli(runner, [], keys.map((key) => `HMGET ${key} fenced tags\n`).join('')).split('\n');
  if (replies.length < 2 * keys.length) {
    throw new Error(`redis-cli answered ${replies.length} lines for ${keys.length} ledgers (2 each)`);
  }
  return keys.flatMap((key, index) => {
    const fenced = replies[2 * index];
    const tags = replies[2 * index + 1];
    if (tags === undefined || tags === '') return [];
    const id = key.slice(key.indexOf('{ledger:') + '{ledger:'.length);
    return [{ ledgerId: id.slice(0, id.indexOf('}')), fenced: fenced === '1', topic: topicOf(tags) }];
  });
}
