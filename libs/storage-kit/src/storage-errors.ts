import { Counter, register, type Registry } from 'prom-client';

/**
 * The logging a store needs: one method, with pino's argument order (object
 * first, message second), so a pino logger or a child of one can be passed as
 * it is.
 */
export interface StorageLogger {
  warn(details: object, message: string): void;
}

/** Where a store sends errors no caller hears: a Redis connection error event, a failed background sweep. */
export interface StorageErrorOptions {
  /** Logged at warn with the store, the kind of failure and the error. Default: not logged. */
  logger?: StorageLogger;
  /** The registry the counter lives in. Default: prom-client's global registry. */
  registry?: Registry;
}

export const BACKGROUND_ERRORS_METRIC = 'ledgerline_storage_background_errors_total';

/** Kinds of background failure, the `kind` label of the counter. */
export const BackgroundErrorKind = {
  /** The Redis client lost or could not open a connection (it keeps reconnecting). */
  REDIS_CONNECTION: 'redis_connection',
  /** A periodic sweep of expired sessions failed; the next sweep tries again. */
  SESSION_SWEEP: 'session_sweep',
  /** Removing one expired session failed; the next sweep tries again. */
  SESSION_REMOVAL: 'session_removal',
  /** A SQLite WAL checkpoint off the event loop failed, or its thread died (the writer checkpoints inline then). */
  WAL_CHECKPOINT: 'wal_checkpoint',
  /** A SQLite store's writer thread stopped: its writes fail UNAVAILABLE until the store is reopened. */
  WRITER_THREAD: 'writer_thread',
} as const;

export type BackgroundErrorKindValue = (typeof BackgroundErrorKind)[keyof typeof BackgroundErrorKind];

/** Reports errors that happen off any call path, so they are counted and seen instead of dropped. */
export interface BackgroundErrors {
  report(kind: BackgroundErrorKindValue, error: unknown): void;
}

function counterIn(registry: Registry): Counter<'store' | 'kind'> {
  const existing = registry.getSingleMetric(BACKGROUND_ERRORS_METRIC);
  if (existing !== undefined) return existing as Counter<'store' | 'kind'>;
  return new Counter({
    name: BACKGROUND_ERRORS_METRIC,
    help: 'Errors a store met outside any call (connection errors, failed session sweeps), by store and kind',
    labelNames: ['store', 'kind'],
    registers: [registry],
  });
}

/** A reporter for one store: `store` names it in the log line and the counter's label. */
export function backgroundErrors(store: string, options: StorageErrorOptions = {}): BackgroundErrors {
  const counter = counterIn(options.registry ?? register);
  return {
    report(kind, error) {
      counter.inc({ store, kind });
      options.logger?.warn({ store, kind, err: error }, `${store}: ${kind.replace('_', ' ')} failed`);
    },
  };
}
