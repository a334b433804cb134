import { randomUUID } from 'node:crypto';
import { BackgroundErrorKind, type BackgroundErrors } from '@ledgerline/storage-kit';
import { foreignSession, sessionExpired, tooManySessions } from './metadata-errors.js';
import type { RedisKeys } from './redis-keys.js';
import { CLAIM_SCRIPT, type RedisClient } from './redis-scripts.js';
import { StoreSession, type SessionBackend } from './store-session.js';
import { MAX_OPEN_SESSIONS, type MetadataSession } from './store.js';

/** Sessions one sweep looks at; the rest wait for the next sweep. */
const SWEEP_BATCH = 100;
/** Paths read per SSCAN round while removing a session's nodes. */
const SCAN_COUNT = 100;
/** SSCAN rounds one removal makes at most; a session with more nodes is finished by a later sweep. */
const MAX_SCAN_ROUNDS = 10_000;

export interface RedisSessionsDependencies {
  client: RedisClient;
  keys: RedisKeys;
  /** Where a failed removal of an expired session is reported (the next sweep tries again). */
  errors: BackgroundErrors;
  /** Runs a Redis call, turning its failures into LedgerlineErrors. */
  call<T>(action: () => Promise<T>): Promise<T>;
  /** Removes the node at `path` if `sessionId` still owns it, and announces the deletion. */
  reap(path: string, sessionId: string): Promise<void>;
}

/**
 * Sessions on Redis. A session is a key with a PEXPIRE of its TTL, renewed by
 * its owner; it lives exactly as long as that key. Its ephemeral nodes are
 * listed in a per-session set, and every session sits in one index sorted by
 * renewal deadline. Whoever sees a session end (its owner on close, any store
 * on a sweep of the index) removes its nodes key by key: they live in other
 * slots than the session, so no single script can.
 */
export class RedisSessions {
  private readonly open = new Map<string, StoreSession>();
  private readonly backend: SessionBackend;

  constructor(private readonly deps: RedisSessionsDependencies) {
    this.backend = {
      renew: (id, ttlMs) => this.renew(id, ttlMs),
      release: (id) => this.remove(id),
      expired: (id) =>
        void this.remove(id).catch((error: unknown) =>
          this.deps.errors.report(BackgroundErrorKind.SESSION_REMOVAL, error),
        ),
    };
  }

  async openSession(ttlMs: number): Promise<MetadataSession> {
    if (this.open.size >= MAX_OPEN_SESSIONS) throw tooManySessions(MAX_OPEN_SESSIONS);
    const { client, keys, call } = this.deps;
    const id = randomUUID();
    const now = Date.now();
    await call(() => client.zadd(keys.sessionsIndex(), now + ttlMs, id));
    await call(() => client.set(keys.session(id), String(ttlMs), 'PX', ttlMs));
    const session = new StoreSession(id, ttlMs, this.backend, (s) => this.open.delete(s.id), now);
    this.open.set(id, session);
    return session;
  }

  /** The id of a session this store opened and still holds; FOREIGN_SESSION or SESSION_EXPIRED otherwise. */
  own(session: MetadataSession | undefined): string | undefined {
    if (session === undefined) return undefined;
    if (this.open.get(session.id) !== session) {
      if (session instanceof StoreSession && session.expired) throw sessionExpired(session.id);
      throw foreignSession();
    }
    if (session.expired) throw sessionExpired(session.id);
    return session.id;
  }

  /** Lists `path` under the session before its node is written, so a cleanup never misses it. */
  async claim(sessionId: string, path: string): Promise<void> {
    const { client, keys, call } = this.deps;
    const claimed = await call(() =>
      CLAIM_SCRIPT.run(client, [keys.session(sessionId), keys.sessionNodes(sessionId)], [path]),
    );
    if (claimed !== 1) {
      this.open.get(sessionId)?.markExpired();
      throw sessionExpired(sessionId);
    }
  }

  /** Tells the owner of a session this store opened that the store let it go. */
  markExpired(sessionId: string): void {
    this.open.get(sessionId)?.markExpired();
  }

  async lives(sessionId: string): Promise<boolean> {
    const { client, keys, call } = this.deps;
    return (await call(() => client.exists(keys.session(sessionId)))) === 1;
  }

  /** Removes sessions whose deadline passed and whose key is gone (their owner died), with their nodes. */
  async sweepExpired(): Promise<void> {
    const { client, keys, call } = this.deps;
    const ids = await call(() =>
      client.zrangebyscore(keys.sessionsIndex(), '-inf', Date.now(), 'LIMIT', 0, SWEEP_BATCH),
    );
    for (const id of ids) {
      if (await this.lives(id)) continue;
      await this.remove(id);
      this.open.get(id)?.markExpired();
    }
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.open.values()].map((session) => session.close()));
  }

  private async renew(id: string, ttlMs: number): Promise<boolean> {
    const { client, keys, call } = this.deps;
    const renewed = await call(() => client.pexpire(keys.session(id), ttlMs));
    if (renewed !== 1) return false;
    await call(() => client.zadd(keys.sessionsIndex(), 'XX', Date.now() + ttlMs, id));
    return true;
  }

  // The session key goes first, so every node of the session counts as absent from then on.
  private async remove(id: string): Promise<void> {
    const { client, keys, call } = this.deps;
    await call(() => client.del(keys.session(id)));
    let cursor = '0';
    for (let round = 0; round < MAX_SCAN_ROUNDS; round++) {
      const [nextCursor, paths] = await call(() => client.sscan(keys.sessionNodes(id), cursor, 'COUNT', SCAN_COUNT));
      await Promise.all(paths.map((path) => this.deps.reap(path, id)));
      cursor = nextCursor;
      if (cursor === '0') {
        await call(() => client.del(keys.sessionNodes(id)));
        await call(() => client.zrem(keys.sessionsIndex(), id));
        return;
      }
    }
  }
}
