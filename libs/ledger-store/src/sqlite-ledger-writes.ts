import type Database from 'better-sqlite3';
import type { LedgerlineError } from '@ledgerline/errors';
import { ledgerClosed, ledgerExists, ledgerFenced, ledgerNotFound } from './errors.js';

/** A write to the ledger file: each runs in its own savepoint of a group commit. */
export type LedgerWrite =
  | { kind: 'create'; ledgerId: number; ownerTags: string; createdAtMs: number }
  | { kind: 'append'; ledgerId: number; entries: Uint8Array[]; totalBytes: number }
  | { kind: 'closeByWriter' | 'fence' | 'closeLedger' | 'delete'; ledgerId: number }
  | { kind: 'deleteMany'; ledgerIds: readonly number[] };

/** Why a write was refused, as the write's body throws it (a plain object, so it crosses a thread). */
export interface LedgerWriteRefusal {
  refusal: 'exists' | 'notFound' | 'fenced' | 'closed';
  ledgerId: number;
}

/**
 * The bodies of the ledger file's writes, as source: a function of a
 * connection that returns `apply(write)`, which runs one write and returns
 * its value (an append's first entry id, a close's or fence's LAC) or throws
 * a LedgerWriteRefusal. Kept as source because the same bodies run on the
 * store's own connection (an in-memory file) and on the writer thread's
 * (sqlite-writer-thread.ts), which is plain CommonJS run with `eval` and
 * imports nothing.
 */
export const LEDGER_WRITES_SOURCE = `function ledgerWrites(db) {
  const sql = {
    insertLedger: db.prepare(
      "INSERT INTO ledgers (id, state, fenced, lac, size, owner_tags, created_at) VALUES (?, 'open', 0, -1, 0, ?, ?) ON CONFLICT (id) DO NOTHING"),
    selectLedger: db.prepare('SELECT id, state, fenced, lac FROM ledgers WHERE id = ?'),
    setState: db.prepare('UPDATE ledgers SET state = ?, fenced = ? WHERE id = ?'),
    advanceLac: db.prepare('UPDATE ledgers SET lac = lac + ?, size = size + ? WHERE id = ?'),
    insertEntry: db.prepare('INSERT INTO entries (ledger_id, entry_id, data) VALUES (?, ?, ?)'),
    deleteEntries: db.prepare('DELETE FROM entries WHERE ledger_id = ?'),
    deleteLedger: db.prepare('DELETE FROM ledgers WHERE id = ?'),
  };
  const refuse = (refusal, ledgerId) => {
    throw { refusal, ledgerId };
  };
  const ledger = (ledgerId) => sql.selectLedger.get(ledgerId) || refuse('notFound', ledgerId);
  const asBuffer = (bytes) => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const remove = (ledgerId) => {
    sql.deleteEntries.run(ledgerId);
    sql.deleteLedger.run(ledgerId);
  };
  return function apply(write) {
    const id = write.ledgerId;
    switch (write.kind) {
      case 'create':
        if (sql.insertLedger.run(id, write.ownerTags, write.createdAtMs).changes === 0) refuse('exists', id);
        return undefined;
      case 'append': {
        const row = ledger(id);
        if (row.state !== 'open') refuse(row.fenced === 1 ? 'fenced' : 'closed', id);
        const first = row.lac + 1;
        for (let i = 0; i < write.entries.length; i++) sql.insertEntry.run(id, first + i, asBuffer(write.entries[i]));
        sql.advanceLac.run(write.entries.length, write.totalBytes, id);
        return first;
      }
      case 'closeByWriter': {
        const row = ledger(id);
        if (row.fenced === 1) refuse('fenced', id);
        if (row.state === 'open') sql.setState.run('closed', 0, id);
        return row.lac;
      }
      case 'fence': {
        const row = ledger(id);
        if (row.state === 'open') sql.setState.run('fenced', 1, id);
        return row.lac;
      }
      case 'closeLedger': {
        // Closing an open ledger from outside its writer takes it away from that writer: a fence.
        const row = ledger(id);
        if (row.state !== 'closed') sql.setState.run('closed', 1, id);
        return row.lac;
      }
      case 'delete':
        remove(id);
        return undefined;
      case 'deleteMany':
        for (const ledgerId of write.ledgerIds) remove(ledgerId);
        return undefined;
      default:
        throw new Error('unknown ledger write ' + String(write.kind));
    }
  };
}`;

/** `apply` over a connection of this thread (see LEDGER_WRITES_SOURCE). */
export function ledgerWritesOn(db: Database.Database): (write: LedgerWrite) => unknown {
  // The one copy of the bodies is source text; here it becomes a function of this thread.
  const factory = new Function(`return (${LEDGER_WRITES_SOURCE});`)() as (
    connection: Database.Database,
  ) => (write: LedgerWrite) => unknown;
  return factory(db);
}

/** The error a caller hears for a refusal, or undefined when `thrown` is not one. */
export function refusalError(thrown: unknown): LedgerlineError | undefined {
  const { refusal, ledgerId } = (thrown ?? {}) as Partial<LedgerWriteRefusal>;
  if (typeof ledgerId !== 'number') return undefined;
  switch (refusal) {
    case 'exists':
      return ledgerExists(ledgerId);
    case 'notFound':
      return ledgerNotFound(ledgerId);
    case 'fenced':
      return ledgerFenced(ledgerId);
    case 'closed':
      return ledgerClosed(ledgerId);
    default:
      return undefined;
  }
}
