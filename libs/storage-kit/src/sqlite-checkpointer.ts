import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/**
 * WAL pages the writer's own connection lets the log reach before it
 * checkpoints inline after all (SQLite's default is 1,000: about 4 MB). Only
 * reached when the checkpointer is gone or cannot keep up, so the log stays
 * bounded (about 64 MB of 4 KiB pages) whatever happens to the worker.
 */
export const INLINE_CHECKPOINT_PAGES = 16_384;

/**
 * Log frames past which the thread starts the log over (a RESTART checkpoint,
 * once nearly all is copied), so the log stays about this size (16 MB) while
 * a writer never pauses.
 */
const RESTART_FRAMES = 4_096;
/** How long a RESTART waits for the writer's transaction in progress (and holds later ones off) at most. */
const RESTART_WAIT_MS = 250;

/** SQLite's own wal_autocheckpoint, which the writer goes back to when the thread dies. */
const SQLITE_AUTOCHECKPOINT_PAGES = 1_000;

/** How often the checkpointer copies what the log gained into the database file. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 100;

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

/**
 * The writer's connection as the checkpointer needs it: its file, whether it
 * is open, and a way to set its wal_autocheckpoint (a better-sqlite3
 * Database, or a stand-in for a connection that lives on another thread).
 */
export type CheckpointedConnection = Pick<Database.Database, 'memory' | 'name' | 'open'> & {
  pragma(source: string): unknown;
};

export interface SqliteCheckpointer {
  /** Checkpoints done so far (each copied whatever the log had gained, often nothing). */
  readonly checkpoints: number;
  /** Stops the worker and closes its connection; call it before closing the writer's connection. */
  close(): Promise<void>;
}

/**
 * The worker's code: its own connection to the file, a PASSIVE checkpoint
 * every interval (it never waits for, nor blocks, the writer or readers) and
 * at once again while it is behind, a message after each so the owner can
 * count them. Plain CommonJS run with `eval`, so it needs no file of its own
 * beside a bundle.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
let stopped = false;
let timer;
const checkpoint = () => {
  if (stopped) return;
  let behind = false;
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    // Frames left over were written while this pass ran: chase them at once.
    behind = passive.busy === 0 && passive.checkpointed < passive.log;
    if (passive.log >= workerData.restartFrames && passive.log - passive.checkpointed <= workerData.restartFrames / 8) {
      // The log only starts over when a writer finds it wholly copied, which a writer that never pauses
      // never does: a RESTART copies the little left while it holds writers off (they wait on their
      // timers, not on the event loop), so the writer's next commit starts the log over.
      db.pragma('busy_timeout = ' + workerData.restartWaitMs);
      try {
        db.pragma('wal_checkpoint(RESTART)');
      } finally {
        db.pragma('busy_timeout = 0');
      }
      behind = false;
    }
    parentPort.postMessage({ done: true });
  } catch (error) {
    parentPort.postMessage({ failed: String((error && error.message) || error) });
  }
  timer = behind ? setImmediate(checkpoint) : setTimeout(checkpoint, workerData.intervalMs);
};
timer = setImmediate(checkpoint);
parentPort.on('message', () => {
  stopped = true;
  clearTimeout(timer);
  clearImmediate(timer);
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
 * worker thread with a connection of its own runs a PASSIVE checkpoint every
 * `intervalMs` (and at once again while it is behind), and once the log
 * passes RESTART_FRAMES with nearly all of it copied, a RESTART: the log only
 * starts over when a writer finds it wholly copied, which a writer that never
 * pauses never does, so the RESTART copies the rest while it holds writers
 * off; they wait for the lock on their timers (the stores' lock queue), not
 * on the event loop. The writer's connection stops checkpointing inline once
 * the thread has checkpointed (from then on only past
 * INLINE_CHECKPOINT_PAGES), and goes back to SQLite's pace if the thread
 * dies. The thread starts `startAfterMs` after the store opens. Nothing
 * changes for durability: a commit is as durable as `synchronous` makes it,
 * and a checkpoint only moves committed pages. An in-memory database has no
 * log: nothing is started for it.
 */
export function startSqliteCheckpointer(
  db: CheckpointedConnection,
  options: SqliteCheckpointerOptions = {},
): SqliteCheckpointer {
  if (db.memory) return { checkpoints: 0, close: () => Promise.resolve() };
  const state = { checkpoints: 0 };
  let closing: Promise<void> | undefined;
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  const begin = () => {
    const started = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: require.resolve('better-sqlite3'),
        path: db.name,
        intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
        restartFrames: RESTART_FRAMES,
        restartWaitMs: RESTART_WAIT_MS,
      },
    });
    // A checkpointer never keeps a process alive: the writer's close stops it, an exit just ends it.
    started.unref();
    exited = new Promise<void>((resolve) =>
      started.once('exit', () => {
        // A thread that died (not one stopped by close) leaves the checkpoints to the writer again, at SQLite's pace.
        if (closing === undefined && db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT_PAGES}`);
        resolve();
      }),
    );
    started.on('message', (message: { done?: true; failed?: string }) => {
      if (message.done === true) {
        // The writer stops checkpointing inline once the thread has shown it can: until then SQLite's own pace holds.
        if (state.checkpoints++ === 0 && db.open) db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
      } else if (message.failed !== undefined) {
        options.onError?.(new Error(`a WAL checkpoint failed: ${message.failed}`));
      }
    });
    started.on('error', (error) => options.onError?.(error));
    worker = started;
  };
  // A thread costs tens of milliseconds to start: a store that lives shorter than this never needs one.
  const delay = setTimeout(begin, options.startAfterMs ?? DEFAULT_CHECKPOINTER_START_MS);
  delay.unref();
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
