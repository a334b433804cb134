import { invalidArgument, ErrorReason } from '@ledgerline/errors';

export const DEFAULT_REDIS_KEY_PREFIX = 'ledgerline:';
const MAX_KEY_PREFIX_LENGTH = 128;

/**
 * The Redis key layout, version 1 (the meta hash carries `v` = 1):
 * - `<prefix>{ledger:<id>}:meta`    hash: v, state, fenced, lac, size, tags (JSON), created (ms), and
 *                                   wcall (the writer's last applied call number; absent before its first append)
 * - `<prefix>{ledger:<id>}:entries` list: entry i at index i (ids are dense from 0), so a range read is one LRANGE
 * - `<prefix>ledgers`               sorted set of every ledger id (score = id), for `list()` paging
 *
 * Both keys of a ledger carry the hash tag `{ledger:<id>}` so they live in one
 * Cluster slot and one Lua script can change them atomically; ledgers spread
 * over the slots by id. The index is one key in its own slot.
 */
export class RedisKeys {
  readonly index: string;

  constructor(readonly prefix: string) {
    // Redis hashes the first {...} of a key: a brace in the prefix would move every ledger into one slot.
    if (typeof prefix !== 'string' || /[{}]/.test(prefix) || prefix.length > MAX_KEY_PREFIX_LENGTH) {
      throw invalidArgument(
        ErrorReason.INVALID_CONFIG,
        `keyPrefix must be a string of at most ${MAX_KEY_PREFIX_LENGTH} characters without '{' or '}', got ${JSON.stringify(prefix)}`,
      );
    }
    this.index = `${prefix}ledgers`;
  }

  meta(ledgerId: number): string {
    return `${this.prefix}{ledger:${ledgerId}}:meta`;
  }

  entries(ledgerId: number): string {
    return `${this.prefix}{ledger:${ledgerId}}:entries`;
  }
}
