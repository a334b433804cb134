import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { CreateLedgerOptions, LedgerStore } from '@ledgerline/ledger-store';

/**
 * A ledger store whose deletes fail (UNAVAILABLE): always for chosen ledgers,
 * and with a given probability for the rest, half of those after the delete
 * landed (an answer lost):
 * the failures a collector must retry through.
 */
export class FailingDeletes implements LedgerStore {
  failureRate = 0;
  readonly failing = new Set<number>();
  failures = 0;

  constructor(
    private readonly inner: LedgerStore,
    private readonly random: () => number = Math.random,
  ) {}

  async delete(ledgerId: number): Promise<void> {
    if (this.failing.has(ledgerId)) {
      this.failures++;
      throw new LedgerlineError(
        'UNAVAILABLE',
        ErrorReason.STORE_UNAVAILABLE,
        `injected failure deleting ledger ${ledgerId}`,
      );
    }
    if (this.random() >= this.failureRate) return this.inner.delete(ledgerId);
    this.failures++;
    if (this.random() < 0.5) await this.inner.delete(ledgerId);
    throw new LedgerlineError(
      'UNAVAILABLE',
      ErrorReason.STORE_UNAVAILABLE,
      `injected failure deleting ledger ${ledgerId}`,
    );
  }

  create(ledgerId: number, options?: CreateLedgerOptions) {
    return this.inner.create(ledgerId, options);
  }
  fence(ledgerId: number) {
    return this.inner.fence(ledgerId);
  }
  closeLedger(ledgerId: number) {
    return this.inner.closeLedger(ledgerId);
  }
  read(ledgerId: number, first: number, last: number) {
    return this.inner.read(ledgerId, first, last);
  }
  lastAddConfirmed(ledgerId: number) {
    return this.inner.lastAddConfirmed(ledgerId);
  }
  info(ledgerId: number) {
    return this.inner.info(ledgerId);
  }
  list(options?: { after?: number; limit?: number }) {
    return this.inner.list(options);
  }
  close() {
    return this.inner.close();
  }
}
