import { invalidArgument, ErrorReason } from '@ledgerline/errors';
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  type RedisConnectionOptions,
  type StorageErrorOptions,
} from '@ledgerline/storage-kit';
import type { LedgerStoreOptions } from './store.js';

export interface RedisLedgerStoreOptions extends LedgerStoreOptions, RedisConnectionOptions, StorageErrorOptions {
  /** Prepended to every key; no braces. Default 'ledgerline:'. */
  keyPrefix?: string;
  /**
   * Replicas that must hold an append before it is acknowledged (Redis WAIT);
   * default 0, at most MAX_WAIT_REPLICAS. Short of them within waitTimeoutMs,
   * the append fails UNAVAILABLE / REPLICATION_INCOMPLETE: the entries are in
   * the ledger on the master but not acknowledged (an ambiguous outcome).
   */
  waitReplicas?: number;
  /** How long WAIT waits for the replicas; default 1000 ms, below commandTimeoutMs. */
  waitTimeoutMs?: number;
}

export const MAX_WAIT_REPLICAS = 16;
export const DEFAULT_WAIT_TIMEOUT_MS = 1_000;

export interface CheckedRedisOptions {
  waitReplicas: number;
  waitTimeoutMs: number;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
}

export function checkRedisOptions(options: RedisLedgerStoreOptions): CheckedRedisOptions {
  const hasUrl = typeof options?.url === 'string' && options.url !== '';
  const hasCluster = Array.isArray(options?.cluster?.startupNodes) && options.cluster.startupNodes.length > 0;
  if (hasUrl === hasCluster) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      'the redis ledger store needs exactly one of url and cluster.startupNodes',
    );
  }
  const checked: CheckedRedisOptions = {
    waitReplicas: options.waitReplicas ?? 0,
    waitTimeoutMs: options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
  };
  const bad = Object.entries(checked).find(([, v]) => !Number.isSafeInteger(v) || v < 0);
  if (bad !== undefined)
    throw invalidArgument(ErrorReason.INVALID_CONFIG, `${bad[0]} must be a non-negative integer, got ${bad[1]}`);
  if (checked.waitReplicas > MAX_WAIT_REPLICAS) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, `waitReplicas must be at most ${MAX_WAIT_REPLICAS}`);
  }
  // WAIT 0 blocks forever, and a WAIT that outlives its command timeout would be reported as an outage.
  if (checked.waitReplicas > 0 && (checked.waitTimeoutMs < 1 || checked.waitTimeoutMs >= checked.commandTimeoutMs)) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, 'waitTimeoutMs must be at least 1 and below commandTimeoutMs');
  }
  if (checked.connectTimeoutMs < 1 || checked.commandTimeoutMs < 1) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, 'connectTimeoutMs and commandTimeoutMs must be at least 1');
  }
  return checked;
}
