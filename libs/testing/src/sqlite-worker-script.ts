import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';

/*
 * The body of a worker script for the multi-process SQLite tests (the other
 * half of WorkerProcess): it parses the one JSON argument, reports what it did
 * as JSON lines on stdout, collects commands from stdin, and runs the mode the
 * argument names. Every worker can `hold-lock`: take the write lock with a
 * plain connection until stdin says `release`, so a test can prove that the
 * store waits for a lock another process holds.
 */

/** What every worker argument carries: the mode to run and the SQLite file. */
export interface SqliteWorkerArgs {
  mode: string;
  file: string;
}

/** What a mode sees: its argument, a way to report, and the commands read so far. */
export interface SqliteWorkerContext<A extends SqliteWorkerArgs> {
  args: A;
  say(line: object): void;
  readonly commands: readonly string[];
}

export type SqliteWorkerMode<A extends SqliteWorkerArgs> = (context: SqliteWorkerContext<A>) => Promise<void>;

/** How long `hold-lock` keeps the lock at most when `release` never comes, in milliseconds. */
export const HOLD_LOCK_MAX_MS = 60_000;
const HOLD_LOCK_POLL_MS = 10;

async function holdLock({ args, say, commands }: SqliteWorkerContext<SqliteWorkerArgs>): Promise<void> {
  const db = new Database(args.file);
  db.exec('BEGIN IMMEDIATE');
  say({ locked: true });
  for (let waited = 0; waited < HOLD_LOCK_MAX_MS && !commands.includes('release'); waited += HOLD_LOCK_POLL_MS) {
    await new Promise((resolve) => setTimeout(resolve, HOLD_LOCK_POLL_MS));
  }
  db.exec('COMMIT');
  db.close();
}

/** Runs the mode named by the process's JSON argument, then exits 0 (`{done}`) or 1 (`{crashed}`). */
export function runSqliteWorker<A extends SqliteWorkerArgs>(modes: Record<string, SqliteWorkerMode<A>>): void {
  const args = JSON.parse(process.argv[2] ?? '{}') as A;
  const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  const commands: string[] = [];
  createInterface({ input: process.stdin }).on('line', (line) => commands.push(line.trim()));
  const run = args.mode === 'hold-lock' ? (holdLock as SqliteWorkerMode<A>) : modes[args.mode];
  const finished = run ? run({ args, say, commands }) : Promise.reject(new Error(`unknown mode ${args.mode}`));
  finished.then(
    () => {
      say({ done: true });
      process.exit(0);
    },
    (thrown: unknown) => {
      say({ crashed: String(thrown) });
      process.exit(1);
    },
  );
}
