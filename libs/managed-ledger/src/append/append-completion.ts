import { LedgerlineError } from '@ledgerline/errors';
import { encodeEntry, type OffsetAssigner } from '@ledgerline/offset-index';
import type { AppendOp, AppendQueue } from './append-queue.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { ManagedLedgerReason } from '../errors.js';
import type { OpenLedger } from '../ledgers/open-ledger.js';

/** What completing appends needs from the pipeline's host (AppendHost has it all). */
export interface CompletionHost {
  readonly assigner: OffsetAssigner;
  now(): number;
  /** Called after entries are confirmed, before their appends resolve. */
  entriesConfirmed(ledger: OpenLedger, entries: ManagedLedgerEntry[]): void;
}

/** Fixes offsets, broker time and bytes the first time an op is sent. */
export function frameOp(op: AppendOp, host: CompletionHost): void {
  if (op.framed !== undefined) return;
  op.offsets = host.assigner.assign(op.numMessages);
  op.brokerTimestampMs = host.now();
  op.framed = encodeEntry(
    op.maxEventTimeMs === undefined
      ? { brokerTimestamp: op.brokerTimestampMs, index: op.offsets.index }
      : { brokerTimestamp: op.brokerTimestampMs, index: op.offsets.index, maxEventTimeMs: op.maxEventTimeMs },
    op.payload,
  );
}

/**
 * Completes the ops at the head of the queue, stored from `firstEntryId` on:
 * the ledger and the assigner count them, the host learns of the entries,
 * and then the appends resolve, in queue order.
 */
export function confirmOps(
  host: CompletionHost,
  queue: AppendQueue,
  ledger: OpenLedger,
  ops: AppendOp[],
  firstEntryId: number,
): void {
  if (firstEntryId !== ledger.entries) {
    throw new LedgerlineError(
      'INTERNAL',
      ManagedLedgerReason.LEDGER_ENTRY_IDS_DIVERGED,
      `ledger ${ledger.ledgerId} stored our write at entry ${firstEntryId}, but we confirmed ${ledger.entries} entries`,
    );
  }
  const entries = ops.map((op, i) => confirmOne(host.assigner, ledger, op, firstEntryId + i));
  queue.shift(ops.length);
  host.entriesConfirmed(ledger, entries);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const entry = entries[i]!;
    op.listener.appended(op.token, op.index, {
      position: entry.position,
      firstOffset: entry.firstOffset,
      lastOffset: entry.lastOffset,
    });
  }
}

function confirmOne(assigner: OffsetAssigner, ledger: OpenLedger, op: AppendOp, entryId: number): ManagedLedgerEntry {
  const offsets = op.offsets!;
  ledger.confirm(offsets.index, op.brokerTimestampMs!, op.framed!.byteLength, op.maxEventTimeMs);
  assigner.acknowledge(offsets);
  return {
    position: { ledgerId: ledger.ledgerId, entryId },
    payload: op.payload,
    firstOffset: offsets.firstOffset,
    lastOffset: offsets.index,
    numMessages: offsets.batchSize,
    brokerTimestampMs: op.brokerTimestampMs!,
  };
}
