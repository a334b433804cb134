import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import type { CreateLedgerOptions, LedgerInfo, LedgerStore } from '@ledgerline/ledger-store';
import { deleteEach, infoEach } from '../ledger-batches.js';

/**
 * A fault in one batch call of FailingDeletes, on its `atCall`-th call of
 * that kind (0 the first): 'fail' rejects having done nothing; 'cut' deletes
 * the first `keep` ledgers of the batch, then rejects (a connection lost
 * mid-batch); 'crash' does what 'cut' does and then never answers, as if the
 * collector's process died there.
 */
export interface BatchFault {
  call: 'infoMany' | 'deleteMany';
  atCall: number;
  mode: 'fail' | 'cut' | 'crash';
  keep?: number;
}

/**
 * A ledger store whose deletes fail (UNAVAILABLE): always for chosen ledgers,
 * and with a given probability for the rest, half of those after the delete
 * landed (an answer lost): the failures a collector must retry through.
 * Batch calls fail per ledger the same way, and take the BatchFaults queued
 * for them; `batchSizes` records every batch call.
 */
export class FailingDeletes implements LedgerStore {
  failureRate = 0;
  readonly failing = new Set<number>();
  failures = 0;
  readonly batchFaults: BatchFault[] = [];
  readonly batchSizes: { call: BatchFault['call']; size: number }[] = [];
  /** Called each time a 'crash' fault is reached. */
  onCrash: () => void = () => undefined;
  private readonly calls = { infoMany: 0, deleteMany: 0 };

  constructor(
    private readonly inner: LedgerStore,
    private readonly random: () => number = Math.random,
  ) {}

  async delete(ledgerId: number): Promise<void> {
    const fate = this.fate(ledgerId);
    if (fate === 'ok') return this.inner.delete(ledgerId);
    if (fate === 'lost-answer') await this.inner.delete(ledgerId);
    throw injected(ledgerId);
  }

  async infoMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<LedgerInfo | undefined>[]> {
    const fault = this.takeFault('infoMany', ledgerIds.length);
    if (fault !== undefined) {
      if (fault.mode === 'crash') return this.crash();
      throw injected(ledgerIds[0] ?? -1);
    }
    return infoEach(this.inner, ledgerIds);
  }

  async deleteMany(ledgerIds: readonly number[]): Promise<PromiseSettledResult<void>[]> {
    const fault = this.takeFault('deleteMany', ledgerIds.length);
    if (fault !== undefined) {
      const kept = ledgerIds.slice(0, fault.mode === 'fail' ? 0 : (fault.keep ?? 0));
      if (kept.length > 0) await this.deleteAll(kept);
      if (fault.mode === 'crash') return this.crash();
      throw injected(ledgerIds[0] ?? -1);
    }
    const fates = ledgerIds.map((id) => this.fate(id));
    await this.deleteAll(ledgerIds.filter((_, i) => fates[i] !== 'failed'));
    return fates.map((fate, i) =>
      fate === 'ok'
        ? { status: 'fulfilled', value: undefined }
        : { status: 'rejected', reason: injected(ledgerIds[i]!) },
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

  /** 'failed': not deleted; 'lost-answer': deleted, but the caller hears a failure. */
  private fate(ledgerId: number): 'ok' | 'failed' | 'lost-answer' {
    if (this.failing.has(ledgerId)) {
      this.failures++;
      return 'failed';
    }
    if (this.random() >= this.failureRate) return 'ok';
    this.failures++;
    return this.random() < 0.5 ? 'lost-answer' : 'failed';
  }

  private async deleteAll(ledgerIds: readonly number[]): Promise<void> {
    if (ledgerIds.length === 0) return;
    for (const result of await deleteEach(this.inner, ledgerIds)) if (result.status === 'rejected') throw result.reason;
  }

  private takeFault(call: BatchFault['call'], size: number): BatchFault | undefined {
    this.batchSizes.push({ call, size });
    const index = this.calls[call]++;
    const at = this.batchFaults.findIndex((fault) => fault.call === call && fault.atCall === index);
    return at === -1 ? undefined : this.batchFaults.splice(at, 1)[0];
  }

  private crash(): Promise<never> {
    this.onCrash();
    return new Promise<never>(() => undefined);
  }
}

function injected(ledgerId: number): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, `injected failure at ledger ${ledgerId}`);
}
