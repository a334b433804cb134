import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';
import { LedgerlineError } from '@ledgerline/errors';
import { SqliteMetadataStore } from '../sqlite-store.js';

/*
 * A second process on the same SQLite metadata file, driven by
 * sqlite-processes.spec.ts. It takes one JSON argument {mode, path, ...},
 * reports what it did as JSON lines on stdout (a write only once it was
 * acknowledged) and reads commands from stdin.
 *
 * Modes:
 * - cas: increments the counter at `path` by compare-and-set (and takes an id
 *   from the `ids` sequence every few rounds) until stdin says `stop` or `maxOps`.
 * - hold-lock: takes the write lock with a plain connection until stdin says `release`.
 */

interface Args {
  mode: 'cas' | 'hold-lock';
  file: string;
  path?: string;
  maxOps?: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
const commands: string[] = [];
createInterface({ input: process.stdin }).on('line', (line) => commands.push(line.trim()));

async function cas(): Promise<void> {
  const store = new SqliteMetadataStore({ path: args.file });
  const path = args.path ?? '/counter';
  say({ ready: true });
  for (let op = 0; op < (args.maxOps ?? 100_000) && !commands.includes('stop'); op++) {
    if (op % 5 === 4) say({ id: await store.nextId('ids') });
    const current = await store.get(path);
    const value = `worker:${op}`;
    try {
      const version = await store.put(path, new TextEncoder().encode(value), {
        expectedVersion: current?.version ?? 'absent',
      });
      say({ version, value });
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      say({ code: error.code, reason: error.reason });
    }
  }
  await store.close();
}

async function holdLock(): Promise<void> {
  const db = new Database(args.file);
  db.exec('BEGIN IMMEDIATE');
  say({ locked: true });
  for (let i = 0; i < 6_000 && !commands.includes('release'); i++) await new Promise((r) => setTimeout(r, 10));
  db.exec('COMMIT');
  db.close();
}

(args.mode === 'cas' ? cas() : holdLock())
  .then(() => {
    say({ done: true });
    process.exit(0);
  })
  .catch((thrown: unknown) => {
    say({ crashed: String(thrown) });
    process.exit(1);
  });
