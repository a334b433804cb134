import { Counter, register as defaultRegistry, type Registry } from 'prom-client';

/** The counters a managed ledger and its cursors keep; one set per registry. */
export interface ManagedLedgerMetrics {
  readonly appendedEntries: Counter<'topic'>;
  readonly rollovers: Counter<'topic'>;
  readonly writeFailures: Counter<'topic'>;
  readonly trimmedLedgers: Counter<'topic'>;
  /** Acknowledged ranges a cursor snapshot could not hold (maxRangesToPersist): redelivered after a crash. */
  readonly cursorRangesNotPersisted: Counter<'topic' | 'cursor'>;
  readonly cursorSnapshots: Counter<'topic'>;
  readonly cursorSnapshotFallbacks: Counter<'topic' | 'cursor'>;
}

const byRegistry = new WeakMap<Registry, ManagedLedgerMetrics>();

/** The metrics registered in `registry` (prom-client's default registry when omitted), created once. */
export function managedLedgerMetrics(registry: Registry = defaultRegistry): ManagedLedgerMetrics {
  const existing = byRegistry.get(registry);
  if (existing !== undefined) return existing;
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const metrics: ManagedLedgerMetrics = {
    appendedEntries: counter('ledgerline_managed_ledger_appended_entries_total', 'Entries acknowledged', ['topic']),
    rollovers: counter('ledgerline_managed_ledger_rollovers_total', 'Ledgers rolled over', ['topic']),
    writeFailures: counter('ledgerline_managed_ledger_write_failures_total', 'Failed ledger-store writes', ['topic']),
    trimmedLedgers: counter('ledgerline_managed_ledger_trimmed_ledgers_total', 'Ledgers marked deletable by trimming', [
      'topic',
    ]),
    cursorRangesNotPersisted: counter(
      'ledgerline_cursor_ranges_not_persisted_total',
      'Acknowledged ranges left out of a cursor snapshot by maxRangesToPersist',
      ['topic', 'cursor'],
    ),
    cursorSnapshots: counter('ledgerline_cursor_snapshots_total', 'Cursor snapshots persisted', ['topic']),
    cursorSnapshotFallbacks: counter(
      'ledgerline_cursor_snapshot_fallbacks_total',
      'Cursor recoveries that skipped a corrupt snapshot',
      ['topic', 'cursor'],
    ),
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
