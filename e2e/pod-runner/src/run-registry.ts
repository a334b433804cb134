import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeByPrefix } from './network.js';
import { processAlive } from './process-alive.js';

/*
 * Every run owns the names starting with `llpr<4 hex>` (bridge, veths,
 * namespaces, /etc/netns folders) and records itself in the registry folder
 * before it makes any of them. A run whose process is gone (killed, crashed)
 * is removed by name by the next runner that starts, or by `pods down`.
 */

/** The start of every name a pod runner makes: nothing else on the machine uses it. */
export const RUN_PREFIX_ROOT = 'llpr';
/** Where each live run is recorded: `<prefix>.json` with its pid and run folder. */
export const REGISTRY_DIR = '/tmp/ledgerline-pod-runs';

export interface RunRecord {
  prefix: string;
  pid: number;
  runDir: string;
  startedAt: string;
}

/** A fresh prefix: `llpr` and 4 hex digits, short enough for interface names (15 characters at most). */
export function newRunPrefix(): string {
  return `${RUN_PREFIX_ROOT}${randomBytes(2).toString('hex')}`;
}

export function registerRun(record: RunRecord): void {
  mkdirSync(REGISTRY_DIR, { recursive: true });
  writeFileSync(join(REGISTRY_DIR, `${record.prefix}.json`), JSON.stringify(record));
}

export function unregisterRun(prefix: string): void {
  rmSync(join(REGISTRY_DIR, `${prefix}.json`), { force: true });
}

/** Removes what runs whose process is gone left behind; returns their prefixes. */
export function sweepStaleRuns(): string[] {
  if (!existsSync(REGISTRY_DIR)) return [];
  const swept: string[] = [];
  for (const file of readdirSync(REGISTRY_DIR).filter((name) => name.endsWith('.json'))) {
    let record: RunRecord;
    try {
      record = JSON.parse(readFileSync(join(REGISTRY_DIR, file), 'utf8')) as RunRecord;
    } catch {
      continue;
    }
    if (!record.prefix?.startsWith(RUN_PREFIX_ROOT) || processAlive(record.pid)) continue;
    removeByPrefix(record.prefix);
    unregisterRun(record.prefix);
    swept.push(record.prefix);
  }
  return swept;
}
