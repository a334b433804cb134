import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { TopicName } from '@ledgerline/naming';
import type { ManagedLedgerMetadata } from '../metadata/metadata-access.js';

/** Bounds of a read-only view, each in its unit. */
export interface ReadOnlyLedgerSettings {
  /** A reader waiting at the end re-reads the LAC from the ledger store after this long without a notification. */
  lacFallbackMs: number;
  /** ManagedLedgerInfo is re-read this often even when no notification came (rolled, trimmed, deleted). */
  metadataRefreshMs: number;
  /** Entries kept in memory for the view's readers (shared by every subscription of the topic). */
  entryCacheMaxBytes: number;
  /** Entries fetched per ledger-store read. */
  maxStoreReadEntries: number;
}

export const DEFAULT_READ_ONLY_LEDGER_SETTINGS: ReadOnlyLedgerSettings = {
  lacFallbackMs: 200,
  metadataRefreshMs: 5_000,
  entryCacheMaxBytes: 32 * 1024 * 1024,
  maxStoreReadEntries: 1_000,
};

export interface ReadOnlyManagedLedgerOptions {
  /** The writer topic whose managed ledger this view reads. */
  topic: string | TopicName;
  numberOfTopicBuckets?: number;
  ledgerStore: LedgerStore;
  /** Only ManagedLedgerInfo is read: over the metadata service's gRPC API in a cluster. */
  metadata: Pick<ManagedLedgerMetadata, 'getManagedLedgerInfo'>;
  bus?: Bus;
  settings?: Partial<ReadOnlyLedgerSettings>;
  logger?: { warn(details: object, message: string): void };
  /** Told, per LAC notification that carries the writer's confirmation time, how long it took to arrive (ms). */
  observeLacPropagationMs?: (ms: number) => void;
}

/** How much the view has learned from each source: what the tests and metrics look at. */
export interface ReadOnlyLedgerStats {
  lacNotifications: number;
  lacFallbackReads: number;
  metadataReads: number;
}
