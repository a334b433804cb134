import type { LedgerWriter } from './store.js';

/** What a backend provides for the writer it hands out from `create`. */
export interface WriterBackend {
  /** `callNumber` counts the writer's append calls from 0: a backend that can reorder calls in transit refuses a late one. */
  appendEntries(ledgerId: number, entries: Uint8Array[], callNumber: number): Promise<number>;
  closeByWriter(ledgerId: number): Promise<number>;
}

/**
 * The writer of one ledger. It keeps no ledger state of its own: the store
 * decides every append, so a writer that lost a fencing race learns it from
 * the store (ABORTED / LEDGER_FENCED) and never from a stale local flag. It
 * only numbers its append calls, so that a store whose calls may overtake one
 * another on the way (a Redis Cluster client re-routing calls while it
 * reconnects) can refuse a call that arrives after a later one.
 */
export class StoreLedgerWriter implements LedgerWriter {
  private nextCallNumber = 0;

  constructor(
    readonly ledgerId: number,
    private readonly backend: WriterBackend,
  ) {}

  append(entries: Uint8Array[]): Promise<number> {
    return this.backend.appendEntries(this.ledgerId, entries, this.nextCallNumber++);
  }

  close(): Promise<number> {
    return this.backend.closeByWriter(this.ledgerId);
  }
}
