import {
  isErrorLike,
  isRedisReply,
  redisOutOfMemory,
  redisReplyCode,
  TRANSIENT_REDIS_REPLIES,
} from '@ledgerline/storage-kit';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason, storeUnavailable } from './errors.js';

/**
 * Turns what a Redis call threw into a LedgerlineError. Error replies of our
 * scripts start with a LedgerStoreReason and are turned into errors by the
 * caller, which knows the ledger (`scriptReason`); replies that mean Redis
 * cannot serve right now, and every connection failure, are UNAVAILABLE.
 */
export function fromRedisError(thrown: unknown): LedgerlineError {
  if (thrown instanceof LedgerlineError) return thrown;
  if (!isErrorLike(thrown) || thrown.name === 'TypeError' || thrown.name === 'RangeError') {
    return LedgerlineError.from(thrown);
  }
  if (!isRedisReply(thrown)) return storeUnavailable('redis', thrown);
  const code = redisReplyCode(thrown);
  if (TRANSIENT_REDIS_REPLIES.has(code)) return storeUnavailable('redis', thrown);
  if (code === 'OOM') return redisOutOfMemory(thrown);
  return LedgerlineError.from(thrown);
}

/** The reasons our scripts reply with. */
const SCRIPT_REASONS: ReadonlySet<string> = new Set([
  ...Object.values(LedgerStoreReason),
  ...Object.values(ErrorReason),
]);

/**
 * The reason word of a script's error reply, or undefined for any other
 * failure. Redis 7 puts 'ERR ' before an error a script returns, older
 * versions do not, so both forms are read.
 */
export function scriptReason(thrown: unknown): string | undefined {
  if (!isRedisReply(thrown)) return undefined;
  const [first, second] = thrown.message.split(' ', 2);
  const code = first === 'ERR' ? second : first;
  return code !== undefined && SCRIPT_REASONS.has(code) ? code : undefined;
}
