import type { AppendResult } from '@ledgerline/managed-ledger';
import type { Deduplication } from './deduplication.js';
import { storedReceipt } from './receipts.js';

/**
 * One producer's consecutive stored entries of a store write, told to deduplication once: its highest id
 * and the receipt of its last entry, made once for the run rather than per entry.
 */
export class ProducerRun {
  private producer = '';
  private highest = 0n;
  private sequenceId = 0n;
  private result: AppendResult | undefined;
  private entries = 0;

  constructor(
    private readonly dedup: Deduplication,
    private readonly publishTimeMs: number,
  ) {}

  add(producer: string, highest: bigint, sequenceId: bigint, result: AppendResult): void {
    if (producer !== this.producer) this.commit();
    this.producer = producer;
    this.highest = highest;
    this.sequenceId = sequenceId;
    this.result = result;
    this.entries++;
  }

  commit(): void {
    if (this.entries === 0) return;
    const receipt = storedReceipt(this.result!, this.publishTimeMs, this.sequenceId);
    this.dedup.persisted(this.producer, this.highest, receipt, this.entries);
    this.entries = 0;
  }
}
