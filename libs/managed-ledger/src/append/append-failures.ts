import { LedgerlineError } from '@ledgerline/errors';
import type { LedgerEntry } from '@ledgerline/ledger-store';
import { decodeEntry } from '@ledgerline/offset-index';
import { confirmOps, type CompletionHost } from './append-completion.js';
import type { AppendQueue } from './append-queue.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { ManagedLedgerReason } from '../errors.js';
import type { OpenLedger } from '../ledgers/open-ledger.js';

/** What the read-back of a failed write needs from the pipeline's host (AppendHost has it all). */
export interface ReadBackHost extends CompletionHost {
  readLedger(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]>;
  /** Called after entriesConfirmed for entries found stored whose appends had already failed as in doubt. */
  entriesAdopted(entries: ManagedLedgerEntry[]): void;
}

/** Entries read back per call when a failed write is checked. */
const READ_BACK_PAGE = 1_000;

/**
 * Reads back every entry of a fenced ledger past what we confirmed, up to
 * its last-add-confirmed: one of ours (matched by offset) is acknowledged;
 * one whose append already failed to its caller (in doubt) is kept as
 * written, its offsets taken, and reported as adopted.
 */
export async function readBackFailedLedger(
  host: ReadBackHost,
  queue: AppendQueue,
  ledger: OpenLedger,
  lastAddConfirmed: number,
): Promise<void> {
  let orphanMetadata: { brokerTimestamp: number; index: number } | undefined;
  while (ledger.lastEntryId < lastAddConfirmed) {
    const first = ledger.entries;
    const last = Math.min(lastAddConfirmed, first + READ_BACK_PAGE - 1);
    for (const stored of await host.readLedger(ledger.ledgerId, first, last)) {
      orphanMetadata = adoptLandedEntry(host, queue, ledger, stored) ?? orphanMetadata;
    }
  }
  if (orphanMetadata !== undefined) host.assigner.recover(orphanMetadata, {});
}

/** Acknowledges the head op if `stored` is it; returns the metadata of an entry no op is waiting for. */
function adoptLandedEntry(
  host: ReadBackHost,
  queue: AppendQueue,
  ledger: OpenLedger,
  stored: LedgerEntry,
): { brokerTimestamp: number; index: number } | undefined {
  const { metadata, payload } = decodeEntry(stored.data);
  if (metadata?.index === undefined || metadata.brokerTimestamp === undefined) {
    throw new LedgerlineError(
      'DATA_LOSS',
      ManagedLedgerReason.ENTRY_METADATA_MISSING,
      `entry ${stored.entryId} of our ledger has no offset`,
    );
  }
  const head = queue.first();
  if (head?.offsets !== undefined && head.offsets.index === metadata.index) {
    confirmOps(host, queue, ledger, [head], stored.entryId);
    return undefined;
  }
  if (head?.offsets !== undefined || metadata.index <= ledger.lastOffset) {
    throw new LedgerlineError(
      'INTERNAL',
      ManagedLedgerReason.LEDGER_ENTRY_IDS_DIVERGED,
      `entry ${stored.entryId} of ledger ${ledger.ledgerId} has offset ${metadata.index}, which no pending append holds`,
    );
  }
  const firstOffset = ledger.lastOffset + 1;
  ledger.confirm(metadata.index, metadata.brokerTimestamp, stored.data.byteLength, metadata.maxEventTimeMs);
  const adopted: ManagedLedgerEntry = {
    position: { ledgerId: ledger.ledgerId, entryId: stored.entryId },
    payload,
    firstOffset,
    lastOffset: metadata.index,
    numMessages: metadata.index - firstOffset + 1,
    brokerTimestampMs: metadata.brokerTimestamp,
  };
  host.entriesConfirmed(ledger, [adopted]);
  host.entriesAdopted([adopted]);
  return { brokerTimestamp: metadata.brokerTimestamp, index: metadata.index };
}

export function isRetryable(err: LedgerlineError): boolean {
  return err.retryable || err.code === 'UNKNOWN' || err.code === 'ABORTED' || err.code === 'FAILED_PRECONDITION';
}

export function writeFailed(name: string, cause: LedgerlineError): LedgerlineError {
  return new LedgerlineError(
    'UNAVAILABLE',
    ManagedLedgerReason.LEDGER_WRITE_FAILED,
    `managed ledger ${name} could not write to the ledger store (${cause.reason}: ${cause.message}); the append may be retried`,
    { cause },
  );
}

/** Why the loop stopped: the host refuses writes (fenced, closed); queued appends fail with the blocker. */
export class WriteBlocked extends Error {
  constructor(readonly blocker: LedgerlineError) {
    super(blocker.message);
  }
}
