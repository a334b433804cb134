import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { ChangePublisher } from './change-publisher.js';
import { badVersion, sessionExpired, storeClosed, MetadataStoreReason } from './metadata-errors.js';
import {
  awaitRedisReady,
  backgroundErrors,
  BackgroundErrorKind,
  checkRedisTarget,
  openRedisClient,
  type BackgroundErrors,
  type RedisConnectionOptions,
  type StorageErrorOptions,
} from '@ledgerline/storage-kit';
import { mapRedisError } from './redis-errors.js';
import { DEFAULT_REDIS_KEY_PREFIX, RedisKeys } from './redis-keys.js';
import {
  CHILDREN_SCRIPT,
  DELETE_SCRIPT,
  PUT_SCRIPT,
  REAP_SCRIPT,
  type RedisClient,
  type RedisScript,
} from './redis-scripts.js';
import { RedisSessions } from './redis-sessions.js';
import {
  DEFAULT_SESSION_SWEEP_INTERVAL_MS,
  type ChildrenOptions,
  type ChildrenPage,
  type DeleteOptions,
  type MetadataSession,
  type MetadataStore,
  type MetadataStoreOptions,
  type PutOptions,
  type SessionOptions,
  type VersionedValue,
} from './store.js';
import {
  anyPath,
  joinPath,
  nodePath,
  resolveChildrenOptions,
  resolveMaxValueBytes,
  validateExpectedVersion,
  validateSequenceName,
  validateTtl,
  validateValue,
  type PathParts,
} from './validate.js';

export interface RedisMetadataStoreOptions extends MetadataStoreOptions {
  /** Prepended to every key, so several stores can share one Redis; no `{` or `}`. Default DEFAULT_REDIS_KEY_PREFIX. */
  keyPrefix?: string;
  /** Whether close() disconnects the client; default true. */
  ownsClient?: boolean;
}

/**
 * How often a write re-runs after checking the liveness of an ephemeral node's
 * owner; more means the node changed owner under us each time (ABORTED).
 */
const MAX_OWNER_CHECKS = 3;

type ScriptReply = [string, ...(string | number)[]];

/**
 * The metadata store on Redis or Redis Cluster (see RedisKeys for the layout).
 * Every write that touches a node is one Lua script on the node's slot;
 * sessions and sequences live in slots of their own.
 */
/**
 * Opens a client for a metadata store: commands issued while Redis is
 * unreachable are refused at once (no offline queue), commands issued in one
 * turn of the event loop go out in one write (auto-pipelining, which lets many
 * concurrent callers share one connection), and connection errors go to the
 * logger and the background error counter. Resolves when the client is ready;
 * UNAVAILABLE / STORE_UNAVAILABLE if it is not within twice connectTimeoutMs.
 */
export async function connectMetadataRedis(
  target: RedisConnectionOptions,
  options: StorageErrorOptions = {},
): Promise<RedisClient> {
  checkRedisTarget(target, 'a Redis metadata store');
  const client = openRedisClient(target, {
    connectionName: 'ledgerline-metadata-store',
    offlineQueue: false,
    autoPipelining: true,
    errors: backgroundErrors('metadata-store', options),
  });
  return awaitRedisReady(client, target, 'the Redis metadata store');
}

export class RedisMetadataStore implements MetadataStore {
  private readonly keys: RedisKeys;
  private readonly publisher: ChangePublisher;
  private readonly maxValueBytes: number;
  private readonly sessions: RedisSessions;
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly ownsClient: boolean;
  private closed = false;
  private readonly errors: BackgroundErrors;

  /** Connects to Redis (UNAVAILABLE / STORE_UNAVAILABLE when it cannot) and opens a store that owns the client. */
  static async connect(
    target: RedisConnectionOptions,
    options: RedisMetadataStoreOptions = {},
  ): Promise<RedisMetadataStore> {
    const keys = new RedisKeys(options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX);
    resolveMaxValueBytes(options.maxValueBytes);
    const client = await connectMetadataRedis(target, options);
    return new RedisMetadataStore(client, { ...options, keyPrefix: keys.prefix, ownsClient: true });
  }

  constructor(
    private readonly client: RedisClient,
    options: RedisMetadataStoreOptions = {},
  ) {
    this.keys = new RedisKeys(options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX);
    this.maxValueBytes = resolveMaxValueBytes(options.maxValueBytes);
    this.ownsClient = options.ownsClient ?? true;
    this.publisher = new ChangePublisher(options.bus);
    this.errors = backgroundErrors('metadata-store', options);
    this.sessions = new RedisSessions({
      client,
      errors: this.errors,
      keys: this.keys,
      call: (action) => this.call(action),
      reap: (path, sessionId) => this.reap(nodePath(path), sessionId),
    });
    const interval = options.sessionSweepIntervalMs ?? DEFAULT_SESSION_SWEEP_INTERVAL_MS;
    this.sweepTimer = setInterval(
      () =>
        void this.sessions
          .sweepExpired()
          .catch((error: unknown) => this.errors.report(BackgroundErrorKind.SESSION_SWEEP, error)),
      interval,
    );
    this.sweepTimer.unref();
  }

  async get(path: string): Promise<VersionedValue | undefined> {
    const parts = anyPath(path);
    if (parts.path === '/') return this.call(async () => undefined);
    const { node } = this.keys.node(parts.parent, parts.name);
    const [value, version, created, modified, owner] = await this.call(() =>
      this.client.hmgetBuffer(node, 'v', 'ver', 'ct', 'mt', 's'),
    );
    if (value == null || version == null || created == null || modified == null) return undefined;
    const result: VersionedValue = {
      value: new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
      version: Number(version.toString()),
      createdAtMs: Number(created.toString()),
      modifiedAtMs: Number(modified.toString()),
    };
    if (owner == null) return result;
    const sessionId = owner.toString();
    if (!(await this.sessions.lives(sessionId))) {
      await this.reap(parts, sessionId);
      return undefined;
    }
    result.ephemeralSessionId = sessionId;
    return result;
  }

  async exists(path: string): Promise<boolean> {
    return (await this.get(path)) !== undefined;
  }

  async put(path: string, value: Uint8Array, options: PutOptions = {}): Promise<number> {
    const parts = nodePath(path);
    validateValue(value, this.maxValueBytes);
    validateExpectedVersion(options.expectedVersion, true);
    this.checkOpen();
    const sessionId = this.sessions.own(options.session);
    if (sessionId !== undefined) await this.sessions.claim(sessionId, path);
    const expected = options.expectedVersion === undefined ? '' : String(options.expectedVersion);
    const data = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const reply = await this.runWithOwnerChecks(PUT_SCRIPT, parts, sessionId, (verdict) => [
      parts.name,
      data,
      expected,
      Date.now(),
      sessionId ?? '',
      verdict,
    ]);
    if (reply[0] === 'BAD') throw badVersion(path, expected, versionOf(reply[1]));
    if (sessionId !== undefined) await this.confirmOwnerLives(parts, sessionId);
    const version = Number(reply[1]);
    await this.publisher.publish({ path, kind: reply[2] === 'created' ? 'created' : 'modified', version });
    return version;
  }

  /**
   * The session key lives in another slot than the node, so the put could not
   * check it atomically: if the session ended while the put was on its way, the
   * node was written for a dead owner, after the sweep that cleans up its nodes.
   * Sessions never come back, so a session alive now was alive at the write.
   * Otherwise the node is removed and the put fails as if it came too late.
   */
  private async confirmOwnerLives(parts: PathParts, sessionId: string): Promise<void> {
    if (await this.sessions.lives(sessionId)) return;
    await this.reap(parts, sessionId);
    this.sessions.markExpired(sessionId);
    throw sessionExpired(sessionId);
  }

  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    const parts = nodePath(path);
    validateExpectedVersion(options.expectedVersion, false);
    this.checkOpen();
    const expected = options.expectedVersion === undefined ? '' : String(options.expectedVersion);
    const reply = await this.runWithOwnerChecks(DELETE_SCRIPT, parts, undefined, (verdict) => [
      parts.name,
      expected,
      verdict,
    ]);
    if (reply[0] === 'BAD') throw badVersion(path, expected, versionOf(reply[1]));
    if (reply[0] === 'DELETED') await this.publisher.publish({ path, kind: 'deleted', version: 0 });
  }

  async children(path: string, options?: ChildrenOptions): Promise<ChildrenPage> {
    anyPath(path);
    const { after, limit } = resolveChildrenOptions(options);
    const keys = this.keys.children(path);
    const min = after === '' ? '-' : `(${after}`;
    const [found, owners] = (await this.call(() =>
      CHILDREN_SCRIPT.run(this.client, [keys.children, keys.ephemeral], [min, limit + 1]),
    )) as [string[], (string | number)[]];
    const page = found.slice(0, limit);
    const dead = await this.deadEphemeralIndexes(owners, limit);
    const names = page.filter((_, index) => !dead.has(index + 1));
    await Promise.all(
      [...dead].map(([index, owner]) => this.reap(nodePath(joinPath(path, page[index - 1] as string)), owner)),
    );
    return found.length > limit ? { names, next: page[page.length - 1] as string } : { names };
  }

  async openSession(options: SessionOptions): Promise<MetadataSession> {
    validateTtl(options?.ttlMs);
    this.checkOpen();
    return this.sessions.openSession(options.ttlMs);
  }

  async nextId(sequence: string): Promise<number> {
    validateSequenceName(sequence);
    const id = await this.call(() => this.client.incr(this.keys.sequence(sequence)));
    if (!Number.isSafeInteger(id)) {
      throw new LedgerlineError(
        'OUT_OF_RANGE',
        MetadataStoreReason.SEQUENCE_EXHAUSTED,
        `sequence ${sequence} passed 2^53`,
      );
    }
    return id;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearInterval(this.sweepTimer);
    await this.sessions.closeAll();
    this.closed = true;
    if (this.ownsClient) this.client.disconnect();
  }

  /** Removes sessions that expired because their owner stopped renewing them (runs on a timer too). */
  sweepExpiredSessions(): Promise<void> {
    return this.sessions.sweepExpired();
  }

  // Runs a node script; when the node is ephemeral and its owner's liveness is unknown, checks it and runs again.
  private async runWithOwnerChecks(
    script: RedisScript,
    parts: PathParts,
    ownSessionId: string | undefined,
    args: (verdict: string) => (string | number | Buffer)[],
  ): Promise<ScriptReply> {
    const keys = this.keys.node(parts.parent, parts.name);
    // A session just claimed is known live; any other owner is looked up.
    let verdict = ownSessionId === undefined ? '' : `live:${ownSessionId}`;
    for (let attempt = 0; attempt < MAX_OWNER_CHECKS; attempt++) {
      const reply = (await this.call(() =>
        script.run(this.client, [keys.node, keys.children, keys.ephemeral], args(verdict)),
      )) as ScriptReply;
      if (reply[0] !== 'CHECK') return reply;
      const owner = String(reply[1]);
      verdict = `${(await this.sessions.lives(owner)) ? 'live' : 'dead'}:${owner}`;
    }
    throw new LedgerlineError(
      'ABORTED',
      ErrorReason.BAD_VERSION,
      `${parts.path} changed owner session ${MAX_OWNER_CHECKS} times during the write; read it again`,
      { details: { path: parts.path } },
    );
  }

  // Maps 1-based page indexes of ephemeral children to their owner, for the owners that are gone.
  private async deadEphemeralIndexes(owners: (string | number)[], limit: number): Promise<Map<number, string>> {
    const byIndex = new Map<number, string>();
    for (let i = 0; i + 1 < owners.length; i += 2) {
      if (Number(owners[i]) <= limit) byIndex.set(Number(owners[i]), String(owners[i + 1]));
    }
    const distinct = [...new Set(byIndex.values())];
    const alive = await Promise.all(distinct.map((owner) => this.sessions.lives(owner)));
    const deadOwners = new Set(distinct.filter((_, i) => !alive[i]));
    return new Map([...byIndex].filter(([, owner]) => deadOwners.has(owner)));
  }

  private async reap(parts: PathParts, sessionId: string): Promise<void> {
    const keys = this.keys.node(parts.parent, parts.name);
    const removed = await this.call(() =>
      REAP_SCRIPT.run(this.client, [keys.node, keys.children, keys.ephemeral], [parts.name, sessionId]),
    );
    if (removed === 1) await this.publisher.publish({ path: parts.path, kind: 'deleted', version: 0 });
  }

  private checkOpen(): void {
    if (this.closed) throw storeClosed();
  }

  private async call<T>(action: () => Promise<T>): Promise<T> {
    this.checkOpen();
    try {
      return await action();
    } catch (error) {
      throw mapRedisError(error);
    }
  }
}

function versionOf(reply: string | number | undefined): number | undefined {
  const version = Number(reply);
  return version >= 1 ? version : undefined;
}
