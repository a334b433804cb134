import type { ExpectedVersion, Versioned } from '@ledgerline/metadata-store';
import type { ManagedCursorInfo, ManagedLedgerInfo } from '@ledgerline/proto';

export interface CursorNamePage {
  /** Decoded cursor names, ascending by their encoded form. */
  names: string[];
  /** An opaque token: pass it back as `pageToken` for the next page; absent on the last page. */
  nextPageToken?: string;
}

/**
 * Everything a managed ledger needs from metadata, and nothing more. The
 * `managedLedgerPath` is the node at `/managed-ledgers/...` (naming's
 * managedLedgerPath); cursors are its children, named by the URL-encoded
 * cursor name as in Pulsar's layout.
 *
 * Every put with a number is a compare-and-set on the version that was read:
 * a conflict is ABORTED / BAD_VERSION and means someone else owns the topic.
 * Implementations: MetadataStoreManagedLedgerMetadata (over a MetadataStore,
 * in-process) and GrpcManagedLedgerMetadata (over the metadata service).
 */
export interface ManagedLedgerMetadata {
  getManagedLedgerInfo(managedLedgerPath: string): Promise<Versioned<ManagedLedgerInfo> | undefined>;
  putManagedLedgerInfo(
    managedLedgerPath: string,
    info: ManagedLedgerInfo,
    expectedVersion: ExpectedVersion,
  ): Promise<number>;
  deleteManagedLedgerInfo(managedLedgerPath: string, expectedVersion: number): Promise<void>;

  getCursorInfo(managedLedgerPath: string, cursorName: string): Promise<Versioned<ManagedCursorInfo> | undefined>;
  putCursorInfo(
    managedLedgerPath: string,
    cursorName: string,
    info: ManagedCursorInfo,
    expectedVersion: ExpectedVersion,
  ): Promise<number>;
  /** Without expectedVersion, deleting a missing cursor is a no-op. */
  deleteCursorInfo(managedLedgerPath: string, cursorName: string, expectedVersion?: number): Promise<void>;
  /** One page of cursor names; `limit` is bounded by the implementation's page limit. */
  listCursors(managedLedgerPath: string, options?: { pageToken?: string; limit?: number }): Promise<CursorNamePage>;

  /** A unique ledger id, larger than every id handed out before. */
  allocateLedgerId(): Promise<number>;
}

/** Cursor names are at most this many UTF-16 code units (before URL encoding). */
export const MAX_CURSOR_NAME_LENGTH = 512;
