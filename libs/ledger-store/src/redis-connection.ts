import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason, storeUnavailable } from './errors.js';
import { LEDGER_SCRIPTS } from './redis-scripts.js';

export type RedisClient = Redis | Cluster;

/** Where the Redis ledger store connects and how long it waits. */
export interface RedisConnectionOptions {
  /** A single Redis, e.g. redis://127.0.0.1:6380. Exactly one of url and cluster. */
  url?: string;
  /** A Redis Cluster: the nodes to discover it from. */
  cluster?: { startupNodes: { host: string; port: number }[] };
  /** Client name shown by CLIENT LIST; default 'ledgerline-ledger-store'. */
  connectionName?: string;
  /** Bound on opening a TCP connection; default 2000 ms. */
  connectTimeoutMs?: number;
  /** Bound on one command's reply once sent; default 5000 ms (must exceed waitTimeoutMs). */
  commandTimeoutMs?: number;
  /** Longest pause between reconnect attempts; default 500 ms. Calls made while down fail after one attempt. */
  maxReconnectDelayMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 500;

/**
 * Opens the client with settings that fail fast instead of queueing: a call
 * made while Redis is down waits for one reconnect attempt at most
 * (maxRetriesPerRequest 0), and a command in flight when the connection drops
 * is rejected, never re-sent after reconnect (autoResendUnfulfilledCommands
 * off, and no failover retry on a Cluster), because re-sending an append that
 * may have run would duplicate it. Replies that say a command did not run
 * (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) are still followed.
 */
export function connectRedis(options: RedisConnectionOptions, onError: (error: Error) => void): RedisClient {
  const maxDelay = options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS;
  const perNode: RedisOptions = {
    connectionName: options.connectionName ?? 'ledgerline-ledger-store',
    connectTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  };
  const retry = (times: number): number => Math.min(times * 50, maxDelay);
  let client: RedisClient;
  if (options.cluster !== undefined) {
    client = new Cluster(options.cluster.startupNodes, {
      redisOptions: perNode,
      clusterRetryStrategy: retry,
      enableOfflineQueue: true,
      // The Cluster client re-sends a command whose connection closed (it reads that as a failover)
      // unless this is 0: an append that ran before the drop would then be stored twice.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: perNode.connectTimeout!,
    });
    client.on('node error', onError);
  } else {
    client = new Redis(options.url!, { ...perNode, retryStrategy: retry, enableOfflineQueue: true });
  }
  // Without a listener ioredis prints every connection error; the store reports them per call instead.
  client.on('error', onError);
  for (const [name, definition] of Object.entries(LEDGER_SCRIPTS)) client.defineCommand(name, definition);
  return client;
}

/** Closes politely when connected (pending replies arrive first), then drops the sockets. */
export async function disconnectRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') {
    await client.quit().catch(() => undefined);
  }
  client.disconnect();
}

const UNAVAILABLE_REPLIES = new Set([
  'LOADING',
  'BUSY',
  'TRYAGAIN',
  'CLUSTERDOWN',
  'MASTERDOWN',
  'READONLY',
  'NOREPLICAS',
]);

/**
 * Turns what a Redis call threw into a LedgerlineError. Error replies of our
 * scripts start with a LedgerStoreReason and are turned into errors by the
 * caller, which knows the ledger (`scriptReason`); replies that mean Redis
 * cannot serve right now, and every connection failure, are UNAVAILABLE.
 */
export function fromRedisError(thrown: unknown): LedgerlineError {
  if (thrown instanceof LedgerlineError) return thrown;
  // Checked by shape, not instanceof: socket errors can come from another realm (a test sandbox).
  if (!isError(thrown) || thrown.name === 'TypeError' || thrown.name === 'RangeError') {
    return LedgerlineError.from(thrown);
  }
  if (thrown.name !== 'ReplyError') return storeUnavailable('redis', thrown);
  const code = replyCode(thrown);
  if (UNAVAILABLE_REPLIES.has(code)) return storeUnavailable('redis', thrown);
  if (code === 'OOM') {
    return new LedgerlineError(
      'RESOURCE_EXHAUSTED',
      ErrorReason.STORE_FULL,
      `Redis is out of memory: ${thrown.message}`,
      {
        cause: thrown,
      },
    );
  }
  return LedgerlineError.from(thrown);
}

/**
 * The reason word of a script's error reply, or undefined for any other
 * failure. Redis 7 puts 'ERR ' before an error a script returns, older
 * versions do not, so both forms are read.
 */
const SCRIPT_REASONS: ReadonlySet<string> = new Set([
  ...Object.values(LedgerStoreReason),
  ...Object.values(ErrorReason),
]);

export function scriptReason(thrown: unknown): string | undefined {
  if (!isError(thrown) || thrown.name !== 'ReplyError') return undefined;
  const [first, second] = thrown.message.split(' ', 2);
  const code = first === 'ERR' ? second : first;
  return code !== undefined && SCRIPT_REASONS.has(code) ? code : undefined;
}

function isError(thrown: unknown): thrown is Error {
  return (
    typeof thrown === 'object' &&
    thrown !== null &&
    typeof (thrown as Error).name === 'string' &&
    typeof (thrown as Error).message === 'string'
  );
}

function replyCode(error: Error): string {
  return error.message.split(' ', 1)[0] ?? '';
}
