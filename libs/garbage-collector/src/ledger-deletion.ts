import { MAX_BATCH_LEDGERS, OwnerTag, validateLedgerId, type LedgerInfo } from '@ledgerline/ledger-store';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerComponent, type DeletableLedger } from '@ledgerline/proto';
import type { CollectorContext, PassCounts } from './collector-context.js';
import { CollectorReason } from './errors.js';
import { deleteEach, infoEach } from './ledger-batches.js';
import { retryDelayMs, type PendingDeletion } from './pending-table.js';

/**
 * What became of one marked ledger. Only 'deleted', 'gone' and 'referenced'
 * let its marker go; 'refused' and 'failed' keep it for a later attempt.
 */
export type LedgerOutcome = 'deleted' | 'gone' | 'referenced' | 'refused' | 'failed';

/** The size of each info and delete batch: deleteConcurrency, within what one store call may take. */
export function deleteBatchSize(ctx: CollectorContext): number {
  return Math.min(ctx.config.deleteConcurrency, MAX_BATCH_LEDGERS);
}

/**
 * Deletes the due marked ledgers of one managed ledger and says what became
 * of each. A ledger referenced again (ledger list or a cursor) is never
 * deleted. The others go in batches of deleteBatchSize, one batch at a time,
 * so at most that many of this managed ledger's ledgers are in flight: one
 * info call for the batch, the owner-tag check of each ledger, then one
 * delete call for the ledgers that passed it. A ledger counts as deleted only
 * once its delete answered; a failed call, a failed ledger within one, and a
 * call cut short all leave the marker, and the ledger is retried with backoff.
 */
export async function deleteMarkedLedgers(
  ctx: CollectorContext,
  path: string,
  markers: readonly DeletableLedger[],
  referenced: ReadonlySet<number>,
  counts: PassCounts,
): Promise<Map<number, LedgerOutcome>> {
  const outcomes = new Map<number, LedgerOutcome>();
  const candidates: DeletableLedger[] = [];
  for (const marker of markers) {
    const ledgerId = Number(marker.ledgerId);
    if (referenced.has(ledgerId)) {
      ctx.logger.warn(
        { managedLedger: path, ledgerId },
        'a ledger marked deletable is referenced again (ledger list or cursor): marker dropped, ledger kept',
      );
      outcomes.set(ledgerId, 'referenced');
      continue;
    }
    try {
      // A bad id would fail the whole batch it joined; alone, it fails only itself, as a single call would.
      validateLedgerId(ledgerId);
      candidates.push(marker);
    } catch (error) {
      outcomes.set(ledgerId, fail(ctx, path, ledgerId, error, counts));
    }
  }
  const size = deleteBatchSize(ctx);
  for (let start = 0; start < candidates.length; start += size) {
    await deleteBatch(ctx, path, candidates.slice(start, start + size), outcomes, counts);
  }
  return outcomes;
}

async function deleteBatch(
  ctx: CollectorContext,
  path: string,
  batch: readonly DeletableLedger[],
  outcomes: Map<number, LedgerOutcome>,
  counts: PassCounts,
): Promise<void> {
  const ids = batch.map((marker) => Number(marker.ledgerId));
  const infos = await infoEach(ctx.ledgerStore, ids);
  const checked: number[] = [];
  infos.forEach((result, i) => {
    const ledgerId = ids[i]!;
    if (result.status === 'rejected') {
      outcomes.set(ledgerId, fail(ctx, path, ledgerId, result.reason, counts));
    } else if (result.value === undefined) {
      outcomes.set(ledgerId, 'gone');
    } else {
      const mismatch = ownerTagMismatch(result.value, path, batch[i]!);
      if (mismatch === undefined) checked.push(ledgerId);
      else outcomes.set(ledgerId, refuse(ctx, path, ledgerId, mismatch, counts));
    }
  });
  if (checked.length === 0) return;
  const deleted = await deleteEach(ctx.ledgerStore, checked);
  deleted.forEach((result, i) => {
    const ledgerId = checked[i]!;
    outcomes.set(
      ledgerId,
      result.status === 'fulfilled' ? 'deleted' : fail(ctx, path, ledgerId, result.reason, counts),
    );
  });
}

/** Why the owner tags do not match the marker; undefined when they do. */
export function ownerTagMismatch(info: LedgerInfo, path: string, marker: DeletableLedger): string | undefined {
  const tags = info.ownerTags;
  const component = marker.component === LedgerComponent.CURSOR ? 'cursor' : 'managed-ledger';
  if (tags[OwnerTag.managedLedger] !== path) {
    return `owner tag ${OwnerTag.managedLedger} is ${JSON.stringify(tags[OwnerTag.managedLedger] ?? null)}, marked by ${path}`;
  }
  if (tags[OwnerTag.component] !== component) {
    return `owner tag ${OwnerTag.component} is ${JSON.stringify(tags[OwnerTag.component] ?? null)}, marked as ${component}`;
  }
  if (component === 'cursor' && tags[OwnerTag.cursor] !== marker.cursorName) {
    return `owner tag ${OwnerTag.cursor} is ${JSON.stringify(tags[OwnerTag.cursor] ?? null)}, marked by cursor ${JSON.stringify(marker.cursorName)}`;
  }
  return undefined;
}

function refuse(ctx: CollectorContext, path: string, ledgerId: number, why: string, counts: PassCounts): 'refused' {
  const pending = ctx.table.get(ledgerId);
  if (pending === undefined) return 'refused';
  const first = pending.refusedReason === undefined;
  pending.refusedReason = CollectorReason.OWNER_TAG_MISMATCH;
  pending.lastError = why;
  schedule(ctx, pending);
  if (!first) return 'refused';
  counts.ownerTagMismatches++;
  ctx.metrics.ownerTagMismatches.inc();
  ctx.logger.error(
    { managedLedger: path, ledgerId, reason: CollectorReason.OWNER_TAG_MISMATCH, why },
    'refusing to delete a marked ledger whose owner tags do not match the marker; a person must look',
  );
  return 'refused';
}

function fail(ctx: CollectorContext, path: string, ledgerId: number, error: unknown, counts: PassCounts): 'failed' {
  counts.failures++;
  ctx.metrics.deletionFailures.inc();
  const pending = ctx.table.get(ledgerId);
  if (pending === undefined) return 'failed';
  const failure = LedgerlineError.from(error);
  pending.lastError = `${failure.code} ${failure.reason}: ${failure.message}`;
  schedule(ctx, pending);
  const threshold = ctx.config.attemptsWarnThreshold;
  if (pending.attempts >= threshold && (pending.attempts - threshold) % 10 === 0) {
    ctx.logger.warn(
      { managedLedger: path, ledgerId, attempts: pending.attempts, lastError: pending.lastError },
      'deleting a marked ledger keeps failing; it is retried with backoff',
    );
  }
  return 'failed';
}

function schedule(ctx: CollectorContext, pending: PendingDeletion): void {
  pending.attempts++;
  const delay = retryDelayMs(pending.attempts, ctx.config.retryBaseDelayMs, ctx.config.retryMaxDelayMs, ctx.random);
  pending.nextAttemptAtMs = ctx.now() + delay;
}
