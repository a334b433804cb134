import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { CreateLedgerOptions, LedgerStore, LedgerWriter } from '@ledgerline/ledger-store';

/**
 * A ledger store as one owner process sees it over a network that can be
 * cut: while cut, every call (writers' appends included) waits
 * `commandTimeoutMs` and fails UNAVAILABLE / STORE_UNAVAILABLE without
 * reaching the store, as a Redis command that got no answer does. The store
 * behind it is shared with other owners, which still reach it.
 */
export class CuttableLedgerStore implements LedgerStore {
  private cut = false;
  /** Calls that failed because of the cut. */
  failedCalls = 0;

  constructor(
    private readonly inner: LedgerStore,
    private readonly commandTimeoutMs = 100,
  ) {}

  cutOff(): void {
    this.cut = true;
  }

  heal(): void {
    this.cut = false;
  }

  create(ledgerId: number, options?: CreateLedgerOptions): Promise<LedgerWriter> {
    return this.call(async () => {
      const writer = await this.inner.create(ledgerId, options);
      return {
        ledgerId: writer.ledgerId,
        append: (entries) => this.call(() => writer.append(entries)),
        close: () => this.call(() => writer.close()),
      };
    });
  }
  fence(ledgerId: number) {
    return this.call(() => this.inner.fence(ledgerId));
  }
  closeLedger(ledgerId: number) {
    return this.call(() => this.inner.closeLedger(ledgerId));
  }
  read(ledgerId: number, firstEntryId: number, lastEntryId: number) {
    return this.call(() => this.inner.read(ledgerId, firstEntryId, lastEntryId));
  }
  lastAddConfirmed(ledgerId: number) {
    return this.call(() => this.inner.lastAddConfirmed(ledgerId));
  }
  info(ledgerId: number) {
    return this.call(() => this.inner.info(ledgerId));
  }
  delete(ledgerId: number) {
    return this.call(() => this.inner.delete(ledgerId));
  }
  list(options?: { after?: number; limit?: number }) {
    return this.call(() => this.inner.list(options));
  }
  /** The shared store outlives one owner: closing the wrapper leaves it open. */
  async close(): Promise<void> {}

  private async call<T>(run: () => Promise<T>): Promise<T> {
    if (!this.cut) return run();
    await new Promise((resolve) => setTimeout(resolve, this.commandTimeoutMs));
    this.failedCalls++;
    throw new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'the ledger store did not answer (cut)');
  }
}
