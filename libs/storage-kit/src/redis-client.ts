import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { ErrorReason, LedgerlineError, invalidArgument } from '@ledgerline/errors';
import { BackgroundErrorKind, type BackgroundErrors } from './storage-errors.js';
import { scalePayloadDeadlines } from './payload-deadline.js';

export type RedisClient = Redis | Cluster;

/** Where a store's Redis is and how long the client waits for it. */
export interface RedisConnectionOptions {
  /** A single Redis, e.g. redis://127.0.0.1:6380. Exactly one of url and cluster. */
  url?: string;
  /** A Redis Cluster: the nodes to discover it from. */
  cluster?: { startupNodes: { host: string; port: number }[] };
  /** Client name shown by CLIENT LIST; each store has its own default. */
  connectionName?: string;
  /** Bound on opening a TCP connection; default 2000 ms. */
  connectTimeoutMs?: number;
  /** Bound on one command's reply once sent; default 5000 ms. */
  commandTimeoutMs?: number;
  /** Longest pause between reconnect attempts, which never stop; default 500 ms. */
  maxReconnectDelayMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 2_000;
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RECONNECT_DELAY_MS = 500;
/** Reconnect attempts back off by this much per attempt, up to maxReconnectDelayMs. */
const RECONNECT_STEP_MS = 50;
/** How long a closing socket may linger; ioredis keeps a timer this long even for a socket already gone. */
const DISCONNECT_TIMEOUT_MS = 200;
/** How long a Cluster waits before following CLUSTERDOWN or TRYAGAIN (replies that say a command did not run). */
const CLUSTER_RETRY_DELAY_MS = 100;

/** How a store wants its client to behave while Redis is away. */
export interface RedisBehaviour {
  connectionName: string;
  /**
   * true: a call made while Redis is down waits for one reconnect attempt;
   * false: it is refused at once.
   */
  offlineQueue: boolean;
  /** Commands issued in one turn of the event loop go out in one write. */
  autoPipelining: boolean;
  /** Receives connection errors: ioredis would print each one otherwise, and the calls report them anyway. */
  errors: BackgroundErrors;
}

/** Checks that exactly one well-formed target is given (INVALID_ARGUMENT / INVALID_CONFIG otherwise). */
export function checkRedisTarget(options: RedisConnectionOptions, what: string): void {
  if (options.cluster !== undefined) {
    const nodes = options.cluster?.startupNodes;
    const valid =
      Array.isArray(nodes) &&
      nodes.length > 0 &&
      nodes.every((n) => typeof n?.host === 'string' && Number.isInteger(n.port) && n.port > 0 && n.port < 65536);
    if (!valid)
      throw invalidArgument(ErrorReason.INVALID_CONFIG, 'cluster.startupNodes must list {host, port} entries');
    return;
  }
  if (typeof options.url !== 'string' || !/^rediss?:\/\//.test(options.url)) {
    throw invalidArgument(ErrorReason.INVALID_CONFIG, `${what} needs url (redis://host:port) or cluster`);
  }
}

/**
 * Opens a client that never re-sends a command whose connection dropped
 * (autoResendUnfulfilledCommands off, and no failover retry on a Cluster): a
 * re-sent append could be stored twice and a re-sent compare-and-set could
 * conflict with itself. Calls made while Redis is down wait for one reconnect
 * attempt at most (maxRetriesPerRequest 0) or are refused (no offline queue),
 * and the client keeps reconnecting in the background. Replies that say a
 * command did not run (MOVED, ASK, TRYAGAIN, CLUSTERDOWN) are still followed.
 * The client connects lazily: `await client.connect()` or the first command.
 */
export function openRedisClient(options: RedisConnectionOptions, behaviour: RedisBehaviour): RedisClient {
  const connectTimeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const maxDelay = options.maxReconnectDelayMs ?? DEFAULT_MAX_RECONNECT_DELAY_MS;
  const perNode: RedisOptions = {
    connectionName: options.connectionName ?? behaviour.connectionName,
    connectTimeout,
    commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
  };
  const retry = (times: number): number => Math.min(times * RECONNECT_STEP_MS, maxDelay);
  const reportError = (error: unknown) => behaviour.errors.report(BackgroundErrorKind.REDIS_CONNECTION, error);
  let client: RedisClient;
  if (options.cluster !== undefined) {
    client = new Cluster(options.cluster.startupNodes, {
      lazyConnect: true,
      redisOptions: perNode,
      clusterRetryStrategy: retry,
      enableOfflineQueue: behaviour.offlineQueue,
      enableAutoPipelining: behaviour.autoPipelining,
      // The Cluster client re-sends a command whose connection closed (it reads that as a failover) unless this is 0.
      retryDelayOnFailover: 0,
      retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
      retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
      slotsRefreshTimeout: connectTimeout,
    });
    client.on('node error', reportError);
  } else {
    client = new Redis(options.url!, {
      ...perNode,
      lazyConnect: true,
      retryStrategy: retry,
      enableOfflineQueue: behaviour.offlineQueue,
      enableAutoPipelining: behaviour.autoPipelining,
    });
  }
  client.on('error', reportError);
  scalePayloadDeadlines(client, perNode.commandTimeout!);
  return client;
}

/**
 * Waits until the client is ready, at most twice connectTimeoutMs; UNAVAILABLE
 * / STORE_UNAVAILABLE (and the client disconnected) when it is not.
 */
export async function awaitRedisReady(
  client: RedisClient,
  options: RedisConnectionOptions,
  what: string,
): Promise<RedisClient> {
  const timeoutMs = 2 * (options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), deadline]);
    return client;
  } catch (cause) {
    client.disconnect();
    throw new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, `cannot connect to ${what}`, { cause });
  } finally {
    clearTimeout(timer);
  }
}

/** Closes politely when connected (pending replies arrive first), then drops the sockets. */
export async function disconnectRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') {
    await client.quit().catch(() => undefined);
  }
  client.disconnect();
}

/** Replies that mean "not now" rather than "never": the server is loading, failing over or busy. */
export const TRANSIENT_REDIS_REPLIES: ReadonlySet<string> = new Set([
  'LOADING',
  'BUSY',
  'TRYAGAIN',
  'CLUSTERDOWN',
  'MASTERDOWN',
  'READONLY',
  'NOREPLICAS',
]);

/** An error reply from Redis (checked by shape: socket errors can come from another realm, such as a test sandbox). */
export function isRedisReply(thrown: unknown): thrown is Error {
  return isErrorLike(thrown) && thrown.name === 'ReplyError';
}

/** The first word of an error reply: its code (OOM, BUSY ...), or the reason a script returned. */
export function redisReplyCode(error: Error): string {
  return error.message.split(' ', 1)[0] ?? '';
}

/** Redis's out-of-memory reply: RESOURCE_EXHAUSTED / STORE_FULL. */
export function redisOutOfMemory(error: Error): LedgerlineError {
  return new LedgerlineError('RESOURCE_EXHAUSTED', ErrorReason.STORE_FULL, `Redis is out of memory: ${error.message}`, {
    cause: error,
  });
}

export function isErrorLike(thrown: unknown): thrown is Error {
  return (
    typeof thrown === 'object' &&
    thrown !== null &&
    typeof (thrown as Error).name === 'string' &&
    typeof (thrown as Error).message === 'string'
  );
}
