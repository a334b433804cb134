import { createHash } from 'node:crypto';
import type { RedisClient } from '@ledgerline/storage-kit';

export type { RedisClient } from '@ledgerline/storage-kit';

/**
 * A Lua script run by its SHA1, loaded on first use per node (EVALSHA, then
 * EVAL on NOSCRIPT). Every script declares all its keys, and all of them share
 * one hash tag, so it runs on one cluster slot.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(
    readonly name: string,
    private readonly lua: string,
    private readonly keyCount: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(client: RedisClient, keys: string[], args: (string | number | Buffer)[]): Promise<unknown> {
    if (keys.length !== this.keyCount) throw new Error(`${this.name} takes ${this.keyCount} keys, got ${keys.length}`);
    try {
      return await client.evalsha(this.sha, this.keyCount, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.lua, this.keyCount, ...keys, ...args);
    }
  }
}

// An ephemeral node whose owner session's liveness the caller has not vouched
// for makes a script stop with {'CHECK', owner}: the session key lives in
// another slot, so the caller checks it and runs again with a verdict
// ('live:<id>' or 'dead:<id>'). A dead owner's node counts as absent.
const OWNER_VERDICT = `
local function owner_state(owner, verdict)
  if not owner then return 'none' end
  if verdict == 'dead:' .. owner then return 'dead' end
  if verdict == 'live:' .. owner then return 'live' end
  return 'unknown'
end
`;

/** KEYS: node, children, ephemeral. ARGV: name, value, expected ('' | 'absent' | n), nowMs, session ('' | id), verdict. */
export const PUT_SCRIPT = new RedisScript(
  'metadata-put',
  `${OWNER_VERDICT}
local cur = redis.call('HMGET', KEYS[1], 'ver', 'ct', 's')
local ver = tonumber(cur[1])
if ver then
  local state = owner_state(cur[3], ARGV[6])
  if state == 'unknown' then return {'CHECK', cur[3]} end
  if state == 'dead' then ver = nil end
end
if ARGV[3] == 'absent' then
  if ver then return {'BAD', ver} end
elseif ARGV[3] ~= '' then
  if ver ~= tonumber(ARGV[3]) then return {'BAD', ver or -1} end
end
local created = ARGV[4]
if ver then
  created = cur[2]
elseif cur[1] then
  redis.call('DEL', KEYS[1])
end
local next_ver = (ver or 0) + 1
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'ver', next_ver, 'ct', created, 'mt', ARGV[4])
-- Only what changes is touched: a script's cost is mostly its redis.call count.
if ARGV[5] ~= '' then
  if ARGV[5] ~= cur[3] then
    redis.call('HSET', KEYS[1], 's', ARGV[5])
    redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
  end
elseif cur[3] then
  redis.call('HDEL', KEYS[1], 's')
  redis.call('HDEL', KEYS[3], ARGV[1])
end
if not cur[1] then redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
if ver then return {'OK', next_ver, 'modified'} end
return {'OK', next_ver, 'created'}
`,
  3,
);

/** KEYS: node, children, ephemeral. ARGV: name, expected ('' | n), verdict. */
export const DELETE_SCRIPT = new RedisScript(
  'metadata-delete',
  `${OWNER_VERDICT}
local cur = redis.call('HMGET', KEYS[1], 'ver', 's')
local ver = tonumber(cur[1])
local live = ver ~= nil
if ver then
  local state = owner_state(cur[2], ARGV[3])
  if state == 'unknown' then return {'CHECK', cur[2]} end
  if state == 'dead' then live = false end
end
if ARGV[2] ~= '' and (not live or ver ~= tonumber(ARGV[2])) then
  if live then return {'BAD', ver} end
  return {'BAD', -1}
end
if not ver then return {'NONE'} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return {'DELETED'}
`,
  3,
);

/** Removes a node only if the given (dead) session still owns it. KEYS: node, children, ephemeral. ARGV: name, session. */
export const REAP_SCRIPT = new RedisScript(
  'metadata-reap',
  `
if redis.call('HGET', KEYS[1], 's') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
`,
  3,
);

/**
 * A page of child names with the owners of the ephemeral ones.
 * KEYS: children, ephemeral. ARGV: min (ZRANGEBYLEX syntax), count.
 * Returns {names, {index, owner, index, owner, ...}}.
 */
export const CHILDREN_SCRIPT = new RedisScript(
  'metadata-children',
  `
local names = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], '+', 'LIMIT', 0, tonumber(ARGV[2]))
local owners = {}
if #names > 0 and redis.call('HLEN', KEYS[2]) > 0 then
  for first = 1, #names, 500 do
    local chunk = {}
    for i = first, math.min(first + 499, #names) do chunk[#chunk + 1] = names[i] end
    local found = redis.call('HMGET', KEYS[2], unpack(chunk))
    for i = 1, #chunk do
      if found[i] then
        owners[#owners + 1] = first + i - 1
        owners[#owners + 1] = found[i]
      end
    end
  end
end
return {names, owners}
`,
  2,
);

/** Records an ephemeral node's path with its session, only while the session lives. KEYS: session, sessionNodes. ARGV: path. */
export const CLAIM_SCRIPT = new RedisScript(
  'metadata-claim',
  `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`,
  2,
);
