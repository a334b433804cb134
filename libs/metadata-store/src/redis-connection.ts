import { Cluster, Redis } from 'ioredis';
import { invalidArgument, LedgerlineError, ErrorReason } from '@ledgerline/errors';
import type { RedisClient } from './redis-scripts.js';
import { MetadataStoreReason } from './metadata-errors.js';

/** Where the Redis metadata store connects: one Redis (`url`) or a Redis Cluster (`cluster.startupNodes`). */
export interface RedisTarget {
  url?: string;
  cluster?: { startupNodes: { host: string; port: number }[] };
}

export interface RedisConnectionOptions {
  /** Bound on opening a connection (and on the first connect); default 2000. */
  connectTimeoutMs?: number;
  /** Bound on one command's reply; default 5000. */
  commandTimeoutMs?: number;
  /** Longest wait between reconnect attempts; reconnects never give up. Default 500. */
  maxReconnectDelayMs?: number;
}

/**
 * Opens a client that fails fast instead of queueing: commands issued while
 * Redis is unreachable are rejected at once (no offline queue), a command in
 * flight when the connection drops is rejected rather than re-sent, on a single
 * Redis or a Cluster (a re-sent compare-and-set could report a conflict with
 * itself, though it was applied), and the client keeps
 * reconnecting in the background, so calls work again once Redis is back.
 * Commands issued in the same turn of the event loop go out in one write
 * (auto-pipelining), which is what lets many concurrent callers share one
 * connection. Resolves when the client is ready; UNAVAILABLE /
 * STORE_UNAVAILABLE if it is not within connectTimeoutMs.
 */
export async function connectRedis(target: RedisTarget, options: RedisConnectionOptions = {}): Promise<RedisClient> {
  const connectTimeout = options.connectTimeoutMs ?? 2000;
  const perNode = {
    connectTimeout,
    commandTimeout: options.commandTimeoutMs ?? 5000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectionName: 'ledgerline-metadata-store',
    // How long a closing socket may linger; ioredis keeps a timer this long even for a socket already gone.
    disconnectTimeout: 200,
  };
  const retry = (times: number) => Math.min(times * 50, options.maxReconnectDelayMs ?? 500);
  const client: RedisClient = target.cluster
    ? new Cluster(checkStartupNodes(target.cluster.startupNodes), {
        lazyConnect: true,
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        // Unless this is 0 the Cluster client re-sends a command whose connection closed (it reads that
        // as a failover): a compare-and-set that ran before the drop would then fail BAD_VERSION against itself.
        retryDelayOnFailover: 0,
        clusterRetryStrategy: retry,
        redisOptions: perNode,
        slotsRefreshTimeout: connectTimeout,
      })
    : new Redis(checkUrl(target.url), {
        ...perNode,
        lazyConnect: true,
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        retryStrategy: retry,
      });
  // Connection errors surface per call as UNAVAILABLE; without a listener ioredis would print each one.
  client.on('error', () => undefined);
  try {
    await withDeadline(client.connect(), connectTimeout * 2);
    return client;
  } catch (cause) {
    client.disconnect();
    throw new LedgerlineError(
      'UNAVAILABLE',
      ErrorReason.STORE_UNAVAILABLE,
      'cannot connect to the Redis metadata store',
      {
        cause,
      },
    );
  }
}

function checkUrl(url: string | undefined): string {
  if (typeof url !== 'string' || !/^rediss?:\/\//.test(url)) {
    throw invalidArgument(
      ErrorReason.INVALID_CONFIG,
      'a Redis metadata store needs url (redis://host:port) or cluster',
    );
  }
  return url;
}

function checkStartupNodes(nodes: { host: string; port: number }[] | undefined) {
  const valid =
    Array.isArray(nodes) &&
    nodes.length > 0 &&
    nodes.every((n) => typeof n?.host === 'string' && Number.isInteger(n.port) && n.port > 0 && n.port < 65536);
  if (!valid) throw invalidArgument(ErrorReason.INVALID_CONFIG, 'cluster.startupNodes must list {host, port} entries');
  return nodes;
}

async function withDeadline<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

// Replies that mean "not now" rather than "never": the server is loading, failing over or busy.
const TRANSIENT_REPLY = /^(LOADING|BUSY|TRYAGAIN|CLUSTERDOWN|MASTERDOWN|READONLY|NOREPLICAS|MOVED|ASK)\b/;

/**
 * Turns what ioredis throws into a LedgerlineError: connection failures and
 * transient replies are UNAVAILABLE / STORE_UNAVAILABLE (retryable), an
 * out-of-memory reply is RESOURCE_EXHAUSTED, anything else INTERNAL.
 */
export function mapRedisError(error: unknown): LedgerlineError {
  if (error instanceof LedgerlineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const isReply = (error as { name?: unknown })?.name === 'ReplyError';
  if (isReply && /^OOM\b/.test(message)) {
    return new LedgerlineError('RESOURCE_EXHAUSTED', ErrorReason.STORE_FULL, `Redis is out of memory: ${message}`, {
      cause: error,
    });
  }
  const isProgramError = error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError;
  if ((isReply && !TRANSIENT_REPLY.test(message)) || isProgramError) {
    return new LedgerlineError(
      'INTERNAL',
      MetadataStoreReason.STORE_ERROR,
      `the Redis metadata store failed: ${message}`,
      {
        cause: error,
      },
    );
  }
  return new LedgerlineError(
    'UNAVAILABLE',
    ErrorReason.STORE_UNAVAILABLE,
    `the Redis metadata store is unavailable: ${message}`,
    {
      cause: error,
    },
  );
}
