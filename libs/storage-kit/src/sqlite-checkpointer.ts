import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/**
 * WAL pages the writer's own connection lets the log reach before it
 * checkpoints inline after all (SQLite's default is 1,000: about 4 MB). Only
 * reached when the checkpointer is gone or cannot keep up, so the log stays
 * bounded (about 64 MB of 4 KiB pages) whatever happens to the worker.
 */
export const INLINE_CHECKPOINT_PAGES = 16_384;

/** How often the checkpointer copies what the log gained into the database file. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 200;

/** How long after the store opens the checkpointer starts (SQLite checkpoints inline until then). */
export const DEFAULT_CHECKPOINTER_START_MS = 1_000;

export interface SqliteCheckpointerOptions {
  /** Between two checkpoints. Default DEFAULT_CHECKPOINT_INTERVAL_MS. */
  intervalMs?: number;
  /** Default DEFAULT_CHECKPOINTER_START_MS. */
  startAfterMs?: number;
  /** Hears a checkpoint that failed (the next one tries again) or a worker that died (the writer checkpoints inline). */
  onError?: (error: Error) => void;
}

export interface SqliteCheckpointer {
  /** Checkpoints done so far (each copied whatever the log had gained, often nothing). */
  readonly checkpoints: number;
  /** Stops the worker and closes its connection; call it before closing the writer's connection. */
  close(): Promise<void>;
}

/**
 * The worker's code: its own connection to the file, a PASSIVE checkpoint
 * every interval (it never waits for, nor blocks, the writer or readers), a
 * message after each so the owner can count them. Plain CommonJS run with
 * `eval`, so it needs no file of its own beside a bundle.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
let stopped = false;
const timer = setInterval(() => {
  if (stopped) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ done: true });
  } catch (error) {
    parentPort.postMessage({ failed: String(error && error.message || error) });
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  stopped = true;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves a WAL-mode SQLite file's checkpoints off the writer's event loop.
 * SQLite checkpoints inside the commit that takes the log past
 * wal_autocheckpoint pages: it copies the log into the database file and
 * syncs it, 10 to 20 ms on this project's VMs every 4 MB written, which held
 * standalone's event loop (its p99 delay at full load was 60 ms). Here a
 * worker thread with a connection of its own checkpoints every
 * `intervalMs`, and the writer's connection checkpoints inline only past
 * INLINE_CHECKPOINT_PAGES (the worker died or fell behind). The worker
 * starts `startAfterMs` after the store opens. Nothing changes
 * for durability: a commit is as durable as `synchronous` makes it before and
 * after, and a checkpoint only moves committed pages. An in-memory database
 * has no log: nothing is started for it.
 */
export function startSqliteCheckpointer(
  db: Database.Database,
  options: SqliteCheckpointerOptions = {},
): SqliteCheckpointer {
  if (db.memory) return { checkpoints: 0, close: () => Promise.resolve() };
  const state = { checkpoints: 0 };
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  const begin = () => {
    db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: require.resolve('better-sqlite3'),
        path: db.name,
        intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
      },
    });
    // A checkpointer never keeps a process alive: the writer's close stops it, an exit just ends it.
    started.unref();
    exited = new Promise<void>((resolve) => started.once('exit', () => resolve()));
    started.on('message', (message: { done?: true; failed?: string }) => {
      if (message.done === true) state.checkpoints++;
      else if (message.failed !== undefined) options.onError?.(new Error(`a WAL checkpoint failed: ${message.failed}`));
    });
    started.on('error', (error) => options.onError?.(error));
    worker = started;
  };
  // A thread costs tens of milliseconds to start: a store that lives shorter than this never needs one.
  const delay = setTimeout(begin, options.startAfterMs ?? DEFAULT_CHECKPOINTER_START_MS);
  delay.unref();
  let closing: Promise<void> | undefined;
  return {
    get checkpoints() {
      return state.checkpoints;
    },
    close() {
      closing ??= (async () => {
        clearTimeout(delay);
        if (worker === undefined) return;
        // Held while it stops, or a process with nothing else to wait for would exit before the connection closes.
        worker.ref();
        worker.postMessage('stop');
        await exited;
      })();
      return closing;
    },
  };
}
