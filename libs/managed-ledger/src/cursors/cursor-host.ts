import type { Position } from '@ledgerline/cursor-codec';
import type { LedgerlineError } from '@ledgerline/errors';
import type { LedgerContext } from '../context.js';
import type { ManagedLedgerEntry } from '../entry.js';
import type { LedgerView } from '../ledgers/ledger-views.js';
import type { DeletableLedgerRecord } from '@ledgerline/ledger-info';
import type { SeekTarget } from '../ledgers/position-lookup.js';
import type { WaitOptions } from '../ledgers/read-waiters.js';

/** What a cursor needs from its managed ledger. */
export interface CursorHost {
  readonly ctx: LedgerContext;
  views(): LedgerView[];
  readEntries(from: Position, options: { maxEntries?: number; maxBytes?: number }): Promise<ManagedLedgerEntry[]>;
  waitForEntries(options: WaitOptions): Promise<boolean>;
  resolveSeekTarget(target: SeekTarget): Promise<Position>;
  markDeletable(records: DeletableLedgerRecord[]): Promise<void>;
  /** The slowest cursor may have moved: trimming may have work. */
  cursorMoved(): void;
  /** A cursor node changed under us: another owner. */
  cursorFenced(err: LedgerlineError): void;
  /** The managed ledger's metadata version, for GetCursor's waitSync. */
  infoVersion(): number;
}
