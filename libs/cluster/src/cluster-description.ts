import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ClusterTlsFiles } from './health.js';
import { LedgerlineError } from '@ledgerline/errors';
import { ClusterReason } from './reasons.js';
import type { ClusterRole } from './roles.js';

/** A running local cluster as `cluster up` writes it down for `cluster status` and `cluster down`. */
export interface ClusterDescription {
  /** The `ledgerline cluster up` process that stops everything on SIGINT or SIGTERM. */
  supervisorPid?: number;
  redisUrl: string;
  natsUrl: string;
  /** redis-server and nats-server processes the cluster started (none when URLs were given). */
  servers: { name: string; port: number; pid: number }[];
  processes: { name: string; role: ClusterRole; pid: number; address: string; metricsAddress: string }[];
  /** When the services serve TLS: the CA and the client certificate status checks (and users) connect with. */
  tls?: ClusterTlsFiles;
}

/** Where `cluster up` keeps its description unless told otherwise. */
export const DEFAULT_DESCRIPTION_FILE = 'data/cluster.json';

export function writeClusterDescription(path: string, description: ClusterDescription): void {
  mkdirSync(dirname(path), { recursive: true });
  // Written aside and renamed, so `cluster status` never reads half a file.
  writeFileSync(`${path}.tmp`, `${JSON.stringify(description, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

export function readClusterDescription(path: string): ClusterDescription {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new LedgerlineError(
      'NOT_FOUND',
      ClusterReason.NO_CLUSTER,
      `no local cluster is described at ${path}: start one with 'ledgerline cluster up' (or pass its --state-file)`,
    );
  }
  try {
    return JSON.parse(text) as ClusterDescription;
  } catch {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      ClusterReason.NO_CLUSTER,
      `${path} is not a cluster description (bad JSON)`,
    );
  }
}

export function removeClusterDescription(path: string): void {
  rmSync(path, { force: true });
}
