import type { LedgerWriter } from './store.js';

/** What a backend provides for the writer it hands out from `create`. */
export interface WriterBackend {
  appendEntries(ledgerId: number, entries: Uint8Array[]): Promise<number>;
  closeByWriter(ledgerId: number): Promise<number>;
}

/**
 * The writer of one ledger. It keeps no state of its own: the store decides
 * every append, so a writer that lost a fencing race learns it from the store
 * (ABORTED / LEDGER_FENCED) and never from a stale local flag.
 */
export class StoreLedgerWriter implements LedgerWriter {
  constructor(
    readonly ledgerId: number,
    private readonly backend: WriterBackend,
  ) {}

  append(entries: Uint8Array[]): Promise<number> {
    return this.backend.appendEntries(this.ledgerId, entries);
  }

  close(): Promise<number> {
    return this.backend.closeByWriter(this.ledgerId);
  }
}
