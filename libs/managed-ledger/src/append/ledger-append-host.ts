import type { LedgerlineError } from '@ledgerline/errors';
import type { AppendHost } from './append-pipeline.js';
import type { LedgerContext } from '../context.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { fenceAndClose } from '../ledgers/ledger-factory.js';
import { rollover, shouldRollover } from '../ledgers/ledger-rollover.js';
import type { ManagedLedgerLifecycle } from '../managed-ledger-lifecycle.js';
import type { ReadWaiters } from '../ledgers/read-waiters.js';

/** What the managed ledger learns from its append pipeline, beyond what the context records. */
export interface AppendEvents {
  /** A new ledger was opened: trimming may have work. */
  rolledOver(): void;
  /** Another owner took the topic. */
  fenced(err: LedgerlineError): void;
}

/**
 * The hooks the append pipeline drives, on one managed ledger's context:
 * confirmed entries go to the cache and wake waiting readers, rollover and
 * the sealing of a failed ledger go to the store and metadata, and the
 * lifecycle says when appends are refused.
 */
export function ledgerAppendHost(
  ctx: LedgerContext,
  lifecycle: ManagedLedgerLifecycle,
  waiters: ReadWaiters,
  adoptedListeners: ReadonlySet<(entries: ManagedLedgerEntry[]) => void>,
  events: AppendEvents,
): AppendHost {
  return {
    name: ctx.name,
    config: ctx.config,
    assigner: ctx.assigner,
    now: ctx.now,
    trace: ctx.appendTrace,
    writeBlocker: () => lifecycle.writeBlocker(),
    submitBlocker: () => lifecycle.submitBlocker(),
    currentLedger: () => ctx.current,
    rolloverDue: (ledger) => shouldRollover(ledger, ctx.config, ctx.now()),
    rollover: async () => {
      await rollover(ctx);
      events.rolledOver();
    },
    sealLedger: (ledgerId) => fenceAndClose(ctx.store, ledgerId),
    readLedger: (ledgerId, first, last) => ctx.store.read(ledgerId, first, last),
    entriesConfirmed: (_ledger, entries) => {
      for (const entry of entries) ctx.cache.put(entry);
      ctx.metrics.appendedEntries.inc({ topic: ctx.topic }, entries.length);
      waiters.notifyAll();
    },
    entriesAdopted: (entries) => {
      for (const listener of [...adoptedListeners]) {
        try {
          listener(entries);
        } catch (err) {
          ctx.logger.warn({ managedLedger: ctx.name, error: String(err) }, 'an adopted-entries listener failed');
        }
      }
    },
    fence: (err) => events.fenced(err),
    logWarning: (message, details) => {
      ctx.metrics.writeFailures.inc({ topic: ctx.topic });
      ctx.logger.warn(details, message);
    },
  };
}
