import { Worker } from 'node:worker_threads';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import {
  GROUP_TRANSACTION_SOURCE,
  LOCK_ATTEMPT_MS,
  LOCK_RETRY_MS,
  type SqliteSynchronous,
} from '@ledgerline/storage-kit';
import { LEDGER_WRITES_SOURCE, refusalError, type LedgerWrite } from './sqlite-ledger-writes.js';
import { fromSqliteError } from './sqlite-schema.js';

/**
 * A write as it crosses to the thread: an append names how many entries it
 * has; their sizes and bytes follow those of the appends before it in the
 * message's one buffer.
 */
type WireWrite =
  Exclude<LedgerWrite, { kind: 'append' }> | { kind: 'append'; ledgerId: number; count: number; totalBytes: number };

/**
 * Main thread to writer thread. `packed` holds every append's entry sizes
 * (`entries` 32-bit sizes, in order) and then their bytes, back to back.
 */
type ToThread =
  | { writes: { id: number; write: WireWrite }[]; packed: ArrayBuffer | undefined; entries: number }
  | { pragma: string }
  | { close: true };

/** Writer thread to main thread: one message per transaction, every write's outcome in submission order. */
type FromThread = { results: [id: number, ok: 0 | 1, valueOrFailure: unknown][] };

/** How a write failed inside the thread: a refusal as the body threw it, or a SQLite error's code and message. */
interface ThreadFailure {
  refusal?: string;
  ledgerId?: number;
  code?: string;
  message?: string;
}

/**
 * The thread's code. Group commit as storage-kit's sqliteGroupCommit runs it
 * on an event loop, with its very transaction (GROUP_TRANSACTION_SOURCE): the writes that arrived in one turn of the thread's loop
 * run in submission order in one IMMEDIATE transaction, each in its own
 * savepoint (a refused one rolls back alone), sharing one commit and one WAL
 * sync; a lock another process holds is waited for on timers, tried again
 * every retryMs until the oldest write has waited busyTimeoutMs. Plain
 * CommonJS run with `eval`, so it needs no file of its own beside a bundle.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('synchronous = ' + workerData.synchronous);
db.pragma('busy_timeout = ' + workerData.lockAttemptMs);
const apply = (${LEDGER_WRITES_SOURCE})(db);
const transact = (${GROUP_TRANSACTION_SOURCE})(db);
const queue = [];
let scheduled;
const isBusy = (e) => e != null && typeof e.code === 'string' && (e.code.startsWith('SQLITE_BUSY') || e.code.startsWith('SQLITE_LOCKED'));
const failure = (e) => (e != null && typeof e.refusal === 'string')
  ? { refusal: e.refusal, ledgerId: e.ledgerId }
  : { code: e != null && typeof e.code === 'string' ? e.code : undefined, message: String((e != null && e.message) || e) };
const attempt = () => {
  const batch = queue.slice(0, workerData.maxPerTransaction);
  let results;
  try {
    const outcomes = transact(batch.map((op) => () => apply(op.write)));
    results = outcomes.map((o, i) => [batch[i].id, o.ok ? 1 : 0, o.ok ? o.value : failure(o.error)]);
  } catch (e) {
    if (isBusy(e) && Date.now() < batch[0].deadline) return 'busy';
    results = batch.map((op) => [op.id, 0, failure(e)]);
  }
  queue.splice(0, batch.length);
  parentPort.postMessage({ results });
  return 'done';
};
const drain = () => {
  scheduled = undefined;
  if (queue.length === 0) return;
  if (attempt() === 'busy') scheduled = setTimeout(drain, workerData.retryMs);
  // The next transaction waits one turn, so writes that arrive meanwhile join it.
  else if (queue.length > 0) scheduled = setImmediate(drain);
};
const pause = new Int32Array(new SharedArrayBuffer(4));
parentPort.on('message', (message) => {
  if (message.pragma !== undefined) {
    db.pragma(message.pragma);
  } else if (message.close === true) {
    clearTimeout(scheduled);
    clearImmediate(scheduled);
    scheduled = undefined;
    // Writes submitted before the close run (they were accepted), spinning on a held lock until their deadline.
    while (queue.length > 0) if (attempt() === 'busy') Atomics.wait(pause, 0, 0, workerData.retryMs);
    db.close();
    parentPort.close();
  } else {
    const arrived = Date.now();
    const sizes = message.packed === undefined ? undefined : new Uint32Array(message.packed, 0, message.entries);
    let next = 0;
    let at = message.entries * 4;
    for (const { id, write } of message.writes) {
      if (write.kind === 'append') {
        const entries = new Array(write.count);
        for (let i = 0; i < entries.length; i++) {
          const size = sizes[next++];
          entries[i] = Buffer.from(message.packed, at, size);
          at += size;
        }
        write.entries = entries;
      }
      queue.push({ id, write, deadline: arrived + workerData.busyTimeoutMs });
    }
    if (scheduled === undefined) scheduled = setImmediate(drain);
  }
});
`;

export interface SqliteWriterThreadOptions {
  path: string;
  synchronous: SqliteSynchronous;
  busyTimeoutMs: number;
  maxPerTransaction: number;
  /** Writes in flight at most; one more is refused at once with `refuse()`. */
  maxWaiting: number;
  refuse: () => LedgerlineError;
  /** Hears the thread stopping other than by close (its writes then fail UNAVAILABLE). */
  onStopped?: (error: LedgerlineError) => void;
}

interface InFlight {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The ledger file's writes on a thread of their own, with a connection of
 * its own: an append's inserts, commit and WAL sync (about a third of
 * standalone's main-thread time under publish load) no longer hold the event
 * loop, and the loop prepares the next writes while the thread commits. The
 * writes submitted in one run of a callback and its microtasks (the appends
 * of every managed ledger that wrote in the turn) cross as one message, the
 * appends' entries packed into one transferred buffer. Outcomes come back in
 * submission order. `settled()` lets a read wait for the writes submitted
 * before it, so the store's reads (on the main thread's own connection) see
 * them as before. A thread that dies fails its writes in flight and every
 * later one UNAVAILABLE: whether a write in flight was applied is then
 * unknown, as with a lost store connection.
 */
export class SqliteWriterThread {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly inFlight = new Map<number, InFlight>();
  /** Submitted in this run, sent at its end. */
  private pending: { id: number; write: LedgerWrite }[] = [];
  /** Reads waiting for every write up to `upTo` to be answered. */
  private readonly waiters: { upTo: number; resolve: () => void }[] = [];
  private answeredUpTo = -1;
  private broken: LedgerlineError | undefined;
  private readonly exited: Promise<void>;
  private closing = false;

  constructor(private readonly options: SqliteWriterThreadOptions) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        driver: require.resolve('better-sqlite3'),
        path: options.path,
        synchronous: options.synchronous,
        lockAttemptMs: Math.min(LOCK_ATTEMPT_MS, options.busyTimeoutMs),
        retryMs: LOCK_RETRY_MS,
        busyTimeoutMs: options.busyTimeoutMs,
        maxPerTransaction: options.maxPerTransaction,
      },
    });
    // Idle, the thread never keeps the process alive; writes in flight do (see submit).
    this.worker.unref();
    this.worker.on('message', (message: FromThread) => this.onMessage(message));
    this.worker.on('error', (error) => this.fail(error));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        this.fail(new Error(this.closing ? 'the store closed it' : `it exited with code ${code}`));
        resolve();
      }),
    );
  }

  submit(write: LedgerWrite): Promise<unknown> {
    if (this.broken !== undefined) return Promise.reject(this.broken);
    if (this.inFlight.size >= this.options.maxWaiting) return Promise.reject(this.options.refuse());
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      if (this.inFlight.size === 0) this.worker.ref();
      this.inFlight.set(id, { resolve, reject });
      if (this.pending.length === 0) process.nextTick(() => this.send());
      this.pending.push({ id, write });
    });
  }

  /** Resolves once every write submitted so far is answered; undefined when none is outstanding. */
  settled(): Promise<void> | undefined {
    this.send();
    if (this.inFlight.size === 0) return undefined;
    const upTo = this.nextId - 1;
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** Sets a pragma on the thread's connection (the checkpointer moves its inline checkpoints). */
  pragma(source: string): void {
    if (this.broken === undefined && !this.closing) this.post({ pragma: source });
  }

  /** Runs every write submitted so far, then closes the thread's connection and ends the thread. */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.send();
      if (this.broken === undefined) {
        this.worker.ref();
        this.post({ close: true });
      }
    }
    await this.exited;
  }

  private send(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    if (this.broken !== undefined) return;
    let entries = 0;
    let bytes = 0;
    for (const { write } of batch) {
      if (write.kind !== 'append') continue;
      entries += write.entries.length;
      bytes += write.totalBytes;
    }
    // One buffer for every append of the run, moved to the thread rather than cloned: sizes first, then bytes.
    const packed = entries === 0 ? undefined : new ArrayBuffer(entries * 4 + bytes);
    const sizes = packed === undefined ? undefined : new Uint32Array(packed, 0, entries);
    const data = packed === undefined ? undefined : new Uint8Array(packed);
    let next = 0;
    let at = entries * 4;
    const writes = batch.map(({ id, write }): { id: number; write: WireWrite } => {
      if (write.kind !== 'append') return { id, write };
      for (const entry of write.entries) {
        sizes![next++] = entry.byteLength;
        data!.set(entry, at);
        at += entry.byteLength;
      }
      const { ledgerId, totalBytes } = write;
      return { id, write: { kind: 'append', ledgerId, count: write.entries.length, totalBytes } };
    });
    const message: ToThread = { writes, packed, entries };
    this.worker.postMessage(message, packed === undefined ? [] : [packed]);
  }

  private post(message: ToThread): void {
    this.worker.postMessage(message);
  }

  private onMessage(message: FromThread): void {
    for (const [id, ok, value] of message.results) {
      const write = this.inFlight.get(id);
      if (write === undefined) continue;
      this.inFlight.delete(id);
      this.answeredUpTo = id;
      if (ok === 1) write.resolve(value);
      else write.reject(this.errorOf(value as ThreadFailure));
    }
    this.wakeReaders();
    if (this.inFlight.size === 0 && !this.closing) this.worker.unref();
  }

  private errorOf(failure: ThreadFailure): LedgerlineError {
    const refusal = refusalError(failure);
    if (refusal !== undefined) return refusal;
    return fromSqliteError(Object.assign(new Error(failure.message ?? 'the write failed'), { code: failure.code }));
  }

  /** Waiters were added in id order, and writes are answered in id order: the ready ones are at the front. */
  private wakeReaders(): void {
    while (this.waiters.length > 0 && (this.waiters[0]!.upTo <= this.answeredUpTo || this.inFlight.size === 0)) {
      this.waiters.shift()!.resolve();
    }
  }

  /** The thread is gone: what was in flight may or may not be applied; nothing more is accepted. */
  private fail(cause: unknown): void {
    if (this.broken === undefined) {
      const why = cause instanceof Error ? cause.message : String(cause);
      this.broken = new LedgerlineError(
        'UNAVAILABLE',
        ErrorReason.STORE_UNAVAILABLE,
        `the sqlite ledger store's writer thread stopped (${why}); reopen the store`,
        { cause },
      );
      if (!this.closing) this.options.onStopped?.(this.broken);
    }
    for (const write of this.inFlight.values()) write.reject(this.broken);
    this.inFlight.clear();
    this.pending = [];
    this.wakeReaders();
  }
}
