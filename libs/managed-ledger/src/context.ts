import type { Bus } from '@ledgerline/bus';
import type { LedgerStore } from '@ledgerline/ledger-store';
import type { OffsetAssigner } from '@ledgerline/offset-index';
import type { Registry } from 'prom-client';
import type { ManagedLedgerConfig } from './config.js';
import type { EntryCache } from './ledgers/entry-cache.js';
import type { InfoKeeper } from './metadata/info-keeper.js';
import type { ManagedLedgerMetadata } from './metadata/metadata-access.js';
import type { ManagedLedgerMetrics } from './metrics.js';
import type { OffsetTables } from './ledgers/offset-tables.js';
import type { OpenLedger } from './ledgers/open-ledger.js';

/** The logging a managed ledger does; a pino logger fits. */
export interface ManagedLedgerLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** What a managed ledger is built on. */
export interface ManagedLedgerDependencies {
  ledgerStore: LedgerStore;
  metadata: ManagedLedgerMetadata;
  /** Where "ledger rolled" and "ledgers deletable" hints go (LAC hints come from the ledger store's hook). */
  bus?: Bus;
  logger?: ManagedLedgerLogger;
  /** The Prometheus registry for this lib's metrics; prom-client's default when omitted. */
  metricsRegistry?: Registry;
  /** Milliseconds since the epoch; Date.now when omitted. */
  clock?: () => number;
  /** Told how long each store write waited for its turn and took (a latency trace); nothing is timed without it. */
  appendTrace?: AppendTrace;
}

/** Where the append pipeline reports the time of its stages, in milliseconds (performance.now). */
export interface AppendTrace {
  /** A write's wait for the shared turn (its group commit) before it was sent. */
  turnWaited(ms: number): void;
  /** A store write of `entries` entries, sent to answered. */
  written(ms: number, entries: number): void;
}

/** Everything the modules of one managed ledger share. */
export interface LedgerContext {
  readonly path: string;
  /** The managed ledger name: the path without `/managed-ledgers/` (Pulsar's persistence name). */
  readonly name: string;
  readonly topic: string;
  readonly config: ManagedLedgerConfig;
  readonly store: LedgerStore;
  readonly metadata: ManagedLedgerMetadata;
  readonly bus: Bus | undefined;
  readonly logger: ManagedLedgerLogger;
  readonly metrics: ManagedLedgerMetrics;
  readonly now: () => number;
  readonly appendTrace: AppendTrace | undefined;
  readonly keeper: InfoKeeper;
  readonly assigner: OffsetAssigner;
  readonly cache: EntryCache;
  readonly offsetTables: OffsetTables;
  /** The ledger being written; undefined before the first rollover or after a failed one. */
  current: OpenLedger | undefined;
  /**
   * Ledgers we created whose recording compare-and-set failed without an
   * answer: the next ledger switch marks each one deletable unless the write
   * turned out to have landed (then the switch drops it as an unused ledger).
   */
  readonly unrecordedLedgers: Set<number>;
}
