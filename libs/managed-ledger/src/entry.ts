import { type Position } from '@ledgerline/cursor-codec';

/** An entry as a managed ledger returns it: the producer's payload and where it sits. */
export interface ManagedLedgerEntry {
  position: Position;
  /** The bytes given to append, without the broker entry metadata frame. */
  payload: Uint8Array;
  /** Offsets of the first and last message of the entry (a batch of numMessages). */
  firstOffset: number;
  lastOffset: number;
  numMessages: number;
  brokerTimestampMs: number;
}

/** What append resolves with, once the ledger store holds the entry. */
export interface AppendResult {
  position: Position;
  firstOffset: number;
  lastOffset: number;
}
