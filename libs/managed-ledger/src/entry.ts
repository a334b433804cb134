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

/** What an append may carry beside its payload. */
export interface AppendOptions {
  /**
   * The largest time a reader is answered for the entry's messages (their
   * largest event time), as its publisher knows it: stored in the entry's
   * broker entry metadata so that a lookup by event time locates the entry
   * without decoding it. Absent: the entry is found by its broker timestamp.
   */
  maxEventTimeMs?: number;
}

/** What append resolves with, once the ledger store holds the entry. */
export interface AppendResult {
  position: Position;
  firstOffset: number;
  lastOffset: number;
}

/**
 * Told of an append's outcome in place of a promise (ManagedLedger.appendWith):
 * `token` and `index` are what the caller gave, handed back, so a caller
 * appending many entries needs no object or closure per entry. Called in
 * queue order, as promises would resolve; neither may throw.
 */
export interface AppendListener<T> {
  appended(token: T, index: number, result: AppendResult): void;
  failed(token: T, index: number, error: Error): void;
}
