import { isRedisReply, redisOutOfMemory, redisReplyCode, TRANSIENT_REDIS_REPLIES } from '@ledgerline/storage-kit';
import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { MetadataStoreReason } from './metadata-errors.js';

/** Replies that redirect a command that did not run: the caller may try again. */
const REDIRECT_REPLIES: ReadonlySet<string> = new Set(['MOVED', 'ASK']);

/**
 * Turns what ioredis throws into a LedgerlineError: connection failures and
 * transient replies are UNAVAILABLE / STORE_UNAVAILABLE (retryable), an
 * out-of-memory reply is RESOURCE_EXHAUSTED / STORE_FULL, anything else
 * INTERNAL / STORE_ERROR.
 */
export function mapRedisError(error: unknown): LedgerlineError {
  if (error instanceof LedgerlineError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isRedisReply(error)) {
    const code = redisReplyCode(error);
    if (code === 'OOM') return redisOutOfMemory(error);
    if (!TRANSIENT_REDIS_REPLIES.has(code) && !REDIRECT_REPLIES.has(code)) return storeError(error, message);
  }
  const isProgramError = error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError;
  if (isProgramError) return storeError(error, message);
  return new LedgerlineError(
    'UNAVAILABLE',
    ErrorReason.STORE_UNAVAILABLE,
    `the Redis metadata store is unavailable: ${message}`,
    { cause: error },
  );
}

function storeError(error: unknown, message: string): LedgerlineError {
  return new LedgerlineError(
    'INTERNAL',
    MetadataStoreReason.STORE_ERROR,
    `the Redis metadata store failed: ${message}`,
    {
      cause: error,
    },
  );
}
