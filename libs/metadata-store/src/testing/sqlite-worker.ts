import { LedgerlineError } from '@ledgerline/errors';
import { runSqliteWorker, type SqliteWorkerContext } from '@ledgerline/testing';
import { SqliteMetadataStore } from '../sqlite-store.js';

/*
 * A second process on the same SQLite metadata file, driven by
 * sqlite-processes.spec.ts. It takes one JSON argument {mode, file, ...},
 * reports what it did as JSON lines on stdout (a write only once it was
 * acknowledged) and reads commands from stdin.
 *
 * Modes (besides the shared `hold-lock`):
 * - cas: increments the counter at `path` by compare-and-set (and takes an id
 *   from the `ids` sequence every few rounds) until stdin says `stop` or `maxOps`.
 */

interface Args {
  mode: 'cas' | 'hold-lock';
  file: string;
  path?: string;
  maxOps?: number;
}

async function cas({ args, say, commands }: SqliteWorkerContext<Args>): Promise<void> {
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

runSqliteWorker<Args>({ cas });
