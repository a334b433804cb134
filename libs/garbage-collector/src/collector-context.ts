import type { LedgerStore } from '@ledgerline/ledger-store';
import type { CollectorConfig } from './config.js';
import type { CollectorMetadata } from './collector-metadata.js';
import type { CollectorMetrics } from './metrics.js';
import type { PendingTable } from './pending-table.js';

/** The logger calls the collector makes (pino's shape). */
export interface CollectorLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Counts one pass (or one hinted collection) adds up; they feed PassReport and the status totals. */
export interface PassCounts {
  ledgersDeleted: number;
  orphansDeleted: number;
  failures: number;
  markersCleared: number;
  topicsFinished: number;
  ownerTagMismatches: number;
  indexEntriesRemoved: number;
  managedLedgersVisited: number;
  referencedMarkersDropped: number;
  ledgersSwept: number;
  orphansUntagged: number;
}

export function emptyCounts(): PassCounts {
  return {
    ledgersDeleted: 0,
    orphansDeleted: 0,
    failures: 0,
    markersCleared: 0,
    topicsFinished: 0,
    ownerTagMismatches: 0,
    indexEntriesRemoved: 0,
    managedLedgersVisited: 0,
    referencedMarkersDropped: 0,
    ledgersSwept: 0,
    orphansUntagged: 0,
  };
}

export function addCounts(into: PassCounts, from: PassCounts): void {
  for (const key of Object.keys(into) as (keyof PassCounts)[]) into[key] += from[key];
}

export interface CollectorContext {
  metadata: CollectorMetadata;
  ledgerStore: LedgerStore;
  config: CollectorConfig;
  table: PendingTable;
  metrics: CollectorMetrics;
  logger: CollectorLogger;
  /** Wall clock: marker ages and ledger ages are wall-clock times. */
  now: () => number;
  random: () => number;
}
