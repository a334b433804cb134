import { LedgerlineError } from '@ledgerline/errors';
import { runSqliteWorker, type SqliteWorkerContext } from '@ledgerline/testing';
import { taggedEntry } from './conformance-support.js';
import { LedgerStoreReason as R } from '../errors.js';
import { SqliteLedgerStore } from '../sqlite-store.js';

/*
 * A second process on the same SQLite ledger file, driven by the
 * multi-process spec (sqlite-processes.spec.ts). It takes one JSON argument
 * {mode, file, ...}, reports what it did as JSON lines on stdout (an append is
 * reported only once it was acknowledged) and reads commands from stdin.
 *
 * Modes (besides the shared `hold-lock`):
 * - append: creates ledger `ledgerId`, appends batches until a call made after
 *   stdin said `fenced` is refused LEDGER_FENCED (or `maxCalls`).
 * - create: creates ledgers `firstId`..`lastId`, reporting each it won.
 */

interface Args {
  mode: 'append' | 'create' | 'hold-lock';
  file: string;
  ledgerId?: number;
  maxCalls?: number;
  entryBytes?: number;
  firstId?: number;
  lastId?: number;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function append({ args, say, commands }: SqliteWorkerContext<Args>): Promise<void> {
  const store = new SqliteLedgerStore({ path: args.file });
  const ledgerId = args.ledgerId ?? 1;
  const writer = await store.create(ledgerId);
  say({ ready: true });
  for (let call = 0; call < (args.maxCalls ?? 100_000); call++) {
    await nextTurn();
    const afterFence = commands.includes('fenced');
    const count = 1 + (call % 7);
    const entries = Array.from({ length: count }, (_, k) => taggedEntry(call, k, args.entryBytes ?? 64));
    try {
      const first = await writer.append(entries);
      say({ call, count, first, afterFence });
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      say({ call, count, afterFence, code: error.code, reason: error.reason });
      if (error.reason === R.ledgerFenced && afterFence) break;
    }
  }
  await store.close();
}

async function create({ args, say }: SqliteWorkerContext<Args>): Promise<void> {
  const store = new SqliteLedgerStore({ path: args.file });
  say({ ready: true });
  for (let id = args.firstId ?? 0; id <= (args.lastId ?? -1); id++) {
    await nextTurn();
    try {
      await store.create(id);
      say({ created: id });
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      say({ id, code: error.code, reason: error.reason });
    }
  }
  await store.close();
}

runSqliteWorker<Args>({ append, create });
