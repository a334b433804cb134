import type { LedgerlineError } from '@ledgerline/errors';
import { closedError, deletingError, terminatedError } from './errors.js';

export type ManagedLedgerStatus = 'open' | 'terminated' | 'fenced' | 'closing' | 'closed' | 'deleted';

/**
 * Where a managed ledger is in its life, and the error it was fenced with
 * once another owner took the topic: together they decide which operations
 * it still accepts, and with which error it refuses the others.
 */
export class ManagedLedgerLifecycle {
  status: ManagedLedgerStatus;
  fenceError: LedgerlineError | undefined;

  constructor(
    private readonly name: string,
    terminated: boolean,
  ) {
    this.status = terminated ? 'terminated' : 'open';
  }

  /** Open or terminated: cursors can still be opened and deleted, and trimming runs. */
  get serving(): boolean {
    return this.status === 'open' || this.status === 'terminated';
  }

  /** Why the write loop must stop: another owner, or the managed ledger is gone. */
  writeBlocker(): LedgerlineError | undefined {
    if (this.fenceError !== undefined) return this.fenceError;
    if (this.status === 'closed') return closedError(this.name);
    if (this.status === 'deleted') return deletingError(this.name);
    return undefined;
  }

  /** Why a new append is refused now. */
  submitBlocker(): LedgerlineError | undefined {
    const blocker = this.writeBlocker();
    if (blocker !== undefined) return blocker;
    if (this.status === 'terminated') return terminatedError(this.name);
    if (this.status !== 'open') return closedError(this.name);
    return undefined;
  }

  /** Refuses an operation that needs the managed ledger open or terminated. */
  checkServing(): void {
    if (!this.serving) throw this.submitBlocker() ?? closedError(this.name);
  }

  checkReadable(): void {
    if (this.status === 'closed' || this.status === 'deleted') throw closedError(this.name);
  }

  /** Records that another owner took the topic; false when that was already known. */
  fence(err: LedgerlineError): boolean {
    if (this.fenceError !== undefined) return false;
    this.fenceError = err;
    if (this.serving) this.status = 'fenced';
    return true;
  }
}
