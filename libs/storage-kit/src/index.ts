export {
  openRedisClient,
  awaitRedisReady,
  disconnectRedis,
  checkRedisTarget,
  isRedisReply,
  isErrorLike,
  redisReplyCode,
  redisOutOfMemory,
  TRANSIENT_REDIS_REPLIES,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_MAX_RECONNECT_DELAY_MS,
} from './redis-client.js';
export { redisTarget } from './redis-target.js';
export type { RedisTarget } from './redis-target.js';
export type { RedisClient, RedisConnectionOptions, RedisBehaviour } from './redis-client.js';
export {
  SqliteLockQueue,
  readWithLockWait,
  isSqliteBusy,
  LOCK_ATTEMPT_MS,
  LOCK_RETRY_MS,
} from './sqlite-lock-queue.js';
export type { SqliteLockQueueOptions, WriteOutcome } from './sqlite-lock-queue.js';
export { sqliteGroupCommit, GROUP_TRANSACTION_SOURCE } from './sqlite-group-commit.js';
export {
  startSqliteCheckpointer,
  INLINE_CHECKPOINT_PAGES,
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  DEFAULT_CHECKPOINTER_START_MS,
} from './sqlite-checkpointer.js';
export type { CheckpointedConnection, SqliteCheckpointer, SqliteCheckpointerOptions } from './sqlite-checkpointer.js';
export type { GroupCommitOptions } from './sqlite-group-commit.js';
export { SQLITE_SYNCHRONOUS_VALUES, DEFAULT_SQLITE_SYNCHRONOUS } from './sqlite-synchronous.js';
export type { SqliteSynchronous } from './sqlite-synchronous.js';
export { backgroundErrors, BackgroundErrorKind, BACKGROUND_ERRORS_METRIC } from './storage-errors.js';
export type {
  BackgroundErrors,
  BackgroundErrorKindValue,
  StorageErrorOptions,
  StorageLogger,
} from './storage-errors.js';
export {
  payloadAllowanceMs,
  argumentBytes,
  MIN_PAYLOAD_BYTES_PER_SECOND,
  PAYLOAD_DEADLINE_THRESHOLD_BYTES,
} from './payload-deadline.js';
