import type { CreateLedgerOptions, LedgerEntry, LedgerInfo, LedgerStore, LedgerWriter } from '@ledgerline/ledger-store';
import { LedgerlineError } from '@ledgerline/rpc';
import type { AppendFaultMode } from './in-memory-ledger-store.js';

/**
 * Wraps any LedgerStore (the real SQLite or Redis ones included) and fails
 * appends on request: 'before' fails without storing, 'after' stores and
 * then reports a failure, as a timeout after the write landed would.
 */
export class FaultInjectingLedgerStore implements LedgerStore {
  readonly appendFaults: AppendFaultMode[] = [];
  readCalls = 0;

  constructor(private readonly inner: LedgerStore) {}

  async create(ledgerId: number, options?: CreateLedgerOptions): Promise<LedgerWriter> {
    const writer = await this.inner.create(ledgerId, options);
    return {
      ledgerId: writer.ledgerId,
      append: async (entries) => {
        const fault = this.appendFaults.shift();
        if (fault === 'before') throw injected('append failed before storing');
        const first = await writer.append(entries);
        if (fault === 'after') throw injected('append failed after storing');
        return first;
      },
      close: () => writer.close(),
    };
  }

  fence(ledgerId: number): Promise<number> {
    return this.inner.fence(ledgerId);
  }
  closeLedger(ledgerId: number): Promise<number> {
    return this.inner.closeLedger(ledgerId);
  }
  read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]> {
    this.readCalls++;
    return this.inner.read(ledgerId, firstEntryId, lastEntryId);
  }
  lastAddConfirmed(ledgerId: number): Promise<number> {
    return this.inner.lastAddConfirmed(ledgerId);
  }
  info(ledgerId: number): Promise<LedgerInfo | undefined> {
    return this.inner.info(ledgerId);
  }
  delete(ledgerId: number): Promise<void> {
    return this.inner.delete(ledgerId);
  }
  list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }> {
    return this.inner.list(options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

function injected(what: string): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', 'STORE_UNAVAILABLE', `injected: ${what}`);
}
