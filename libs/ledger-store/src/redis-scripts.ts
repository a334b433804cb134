/*
 * The Lua scripts that change a ledger. Redis runs a script atomically, and
 * every key a script touches shares the ledger's hash tag, so each one is a
 * single-slot transaction on a Redis Cluster too. Failures come back as error
 * replies whose first word is a LedgerStoreReason.
 *
 * Meta fields are described in redis-keys.ts. Invariant checked on append:
 * the entries list holds exactly lac + 1 entries.
 */

/** KEYS: meta. ARGV: owner tags JSON, created ms. */
export const CREATE_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.error_reply('LEDGER_EXISTS')
end
redis.call('HSET', KEYS[1], 'v', '1', 'state', 'open', 'fenced', '0', 'lac', '-1', 'size', '0',
  'tags', ARGV[1], 'created', ARGV[2])
return 1
`;

/**
 * The checks every append makes first (KEYS: meta, entries; ARGV[1]: the
 * writer's call number), leaving `lac` set. A call numbered at or below the
 * last one applied was overtaken in transit by a later call of the same
 * writer, and is refused (APPEND_OVERTAKEN) so that applied calls keep their
 * call order.
 */
const APPEND_CHECKS = `
local meta = redis.call('HMGET', KEYS[1], 'state', 'fenced', 'lac', 'wcall')
if not meta[1] then
  return redis.error_reply('LEDGER_NOT_FOUND')
end
if meta[1] ~= 'open' then
  if meta[2] == '1' then
    return redis.error_reply('LEDGER_FENCED')
  end
  return redis.error_reply('LEDGER_CLOSED')
end
if meta[4] and tonumber(ARGV[1]) <= tonumber(meta[4]) then
  return redis.error_reply('APPEND_OVERTAKEN call ' .. ARGV[1] .. ' arrived after call ' .. meta[4])
end
local lac = tonumber(meta[3])
if redis.call('LLEN', KEYS[2]) ~= lac + 1 then
  return redis.error_reply('LEDGER_STORE_CORRUPT the entries list does not match the last-add-confirmed')
end
`;

/** Appends the Lua list `entries` (unpack is bounded by the Lua C stack, so they go in slices) and records them. */
const APPEND_RECORD = `
for i = 1, #entries, 1000 do
  redis.call('RPUSH', KEYS[2], unpack(entries, i, math.min(i + 999, #entries)))
end
redis.call('HSET', KEYS[1], 'lac', lac + #entries, 'wcall', ARGV[1])
redis.call('HINCRBY', KEYS[1], 'size', bytes)
return lac + 1
`;

/** KEYS: meta, entries. ARGV: the writer's call number, then one argument per entry. Returns the first entry id. */
export const APPEND_SCRIPT = `${APPEND_CHECKS}
local entries = {}
local bytes = 0
for i = 2, #ARGV do
  entries[i - 1] = ARGV[i]
  bytes = bytes + #ARGV[i]
end
${APPEND_RECORD}`;

/**
 * KEYS: meta, entries. ARGV: the writer's call number, the entries' sizes in
 * bytes (decimal, comma-separated), then the entries back to back in one
 * argument. Returns the first entry id. For calls of small entries: ioredis'
 * own commands spent about 3 µs on each argument, more than a copy of the
 * entry into one argument cost. The append command (redis-append-command.ts)
 * now writes either form to the socket without copying the entries.
 */
export const APPEND_PACKED_SCRIPT = `${APPEND_CHECKS}
local packed = ARGV[3]
local entries = {}
local at = 1
for size in string.gmatch(ARGV[2], '%d+') do
  local next_at = at + tonumber(size)
  entries[#entries + 1] = string.sub(packed, at, next_at - 1)
  at = next_at
end
if at ~= #packed + 1 then
  return redis.error_reply('BAD_ENTRY the entry sizes add up to ' .. (at - 1) .. ' bytes, but ' .. #packed .. ' came')
end
local bytes = #packed
${APPEND_RECORD}`;

/** KEYS: meta. Fences an open ledger; returns the LAC in any state. */
export const FENCE_SCRIPT = `
local meta = redis.call('HMGET', KEYS[1], 'state', 'lac')
if not meta[1] then
  return redis.error_reply('LEDGER_NOT_FOUND')
end
if meta[1] == 'open' then
  redis.call('HSET', KEYS[1], 'state', 'fenced', 'fenced', '1')
end
return tonumber(meta[2])
`;

/**
 * KEYS: meta. Seals a ledger for a recovering owner; returns the LAC. Closing
 * an open ledger from outside its writer is a fence too, so it sets `fenced`.
 */
export const CLOSE_LEDGER_SCRIPT = `
local meta = redis.call('HMGET', KEYS[1], 'state', 'lac')
if not meta[1] then
  return redis.error_reply('LEDGER_NOT_FOUND')
end
if meta[1] ~= 'closed' then
  redis.call('HSET', KEYS[1], 'state', 'closed', 'fenced', '1')
end
return tonumber(meta[2])
`;

/** KEYS: meta. The writer's own close: refused once fenced, idempotent otherwise. */
export const WRITER_CLOSE_SCRIPT = `
local meta = redis.call('HMGET', KEYS[1], 'state', 'fenced', 'lac')
if not meta[1] then
  return redis.error_reply('LEDGER_NOT_FOUND')
end
if meta[2] == '1' then
  return redis.error_reply('LEDGER_FENCED')
end
if meta[1] == 'open' then
  redis.call('HSET', KEYS[1], 'state', 'closed')
end
return tonumber(meta[3])
`;

/** Every script with the number of keys it takes, registered on the client by name. */
export const LEDGER_SCRIPTS = {
  ledgerCreate: { lua: CREATE_SCRIPT, numberOfKeys: 1 },
  ledgerAppend: { lua: APPEND_SCRIPT, numberOfKeys: 2 },
  ledgerAppendPacked: { lua: APPEND_PACKED_SCRIPT, numberOfKeys: 2 },
  ledgerFence: { lua: FENCE_SCRIPT, numberOfKeys: 1 },
  ledgerCloseLedger: { lua: CLOSE_LEDGER_SCRIPT, numberOfKeys: 1 },
  ledgerWriterClose: { lua: WRITER_CLOSE_SCRIPT, numberOfKeys: 1 },
} as const;

export type LedgerScriptName = keyof typeof LEDGER_SCRIPTS;
