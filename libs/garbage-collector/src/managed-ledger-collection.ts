import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { OwnerTag, type LedgerInfo } from '@ledgerline/ledger-store';
import { LedgerlineError } from '@ledgerline/errors';
import {
  LedgerComponent,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
  type DeletableLedger,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import { backOff } from 'exponential-backoff';
import type { CollectorContext, PassCounts } from './collector-context.js';
import { addCursorLedgers } from './cursor-ledgers.js';
import type { StoredNode } from './collector-metadata.js';
import { CollectorReason, isBadVersionError } from './errors.js';
import { retryDelayMs, type PendingDeletion } from './pending-table.js';

/** Attempts of the marker compare-and-set when others keep changing the node (the owner, another collector). */
const MARKER_CAS_ATTEMPTS = 20;

export type CollectionOutcome = 'missing' | 'finished' | 'no-markers' | 'pending';

type LedgerOutcome = 'deleted' | 'gone' | 'referenced' | 'refused' | 'failed' | 'not-due';

/**
 * Collects one managed ledger (PIP-129 phase 2): for each marked ledger that
 * is due, checks it is referenced nowhere and that its owner tags name the
 * managed ledger (or cursor) that marked it, deletes it from the ledger store
 * (already gone counts as done), then removes the finished markers with one
 * compare-and-set on the version read (re-read and retried on BAD_VERSION).
 * A deleted topic whose last marker is gone has its node removed.
 */
export async function collectManagedLedger(
  ctx: CollectorContext,
  path: string,
  counts: PassCounts,
): Promise<CollectionOutcome> {
  counts.managedLedgersVisited++;
  const node = await ctx.metadata.get(path);
  if (node === undefined) {
    ctx.table.forgetPath(path);
    return 'missing';
  }
  const info = decodeInfo(path, node);
  if (info.deletableLedgers.length === 0) return finishIfDeleting(ctx, path, node, info, counts);
  syncTable(ctx, path, info.deletableLedgers);
  const due = info.deletableLedgers
    .filter((marker) => (ctx.table.get(Number(marker.ledgerId))?.nextAttemptAtMs ?? 0) <= ctx.now())
    .slice(0, ctx.config.maxMarkersPerManagedLedgerPerPass);
  if (due.length === 0) return 'pending';
  const referenced = await referencedLedgers(ctx, path, info);
  const outcomes = new Map<number, LedgerOutcome>();
  await forEachConcurrently(due, ctx.config.deleteConcurrency, async (marker) => {
    outcomes.set(Number(marker.ledgerId), await deleteMarked(ctx, path, marker, referenced, counts));
  });
  const finished = [...outcomes].filter(([, o]) => o === 'deleted' || o === 'gone' || o === 'referenced');
  if (finished.length === 0) return 'pending';
  const cleared = await clearMarkers(ctx, path, node, new Set(finished.map(([id]) => id)));
  if (cleared === undefined) return 'missing';
  for (const ledgerId of cleared.removed) {
    const outcome = outcomes.get(ledgerId);
    if (outcome === 'referenced') {
      counts.referencedMarkersDropped++;
      ctx.metrics.referencedMarkersDropped.inc();
    } else {
      counts.ledgersDeleted++;
      ctx.metrics.ledgersDeleted.inc();
    }
  }
  counts.markersCleared += cleared.removed.length;
  const remaining = cleared.info.deletableLedgers;
  syncTable(ctx, path, remaining);
  if (remaining.length === 0) return finishIfDeleting(ctx, path, cleared.node, cleared.info, counts);
  return 'pending';
}

function decodeInfo(path: string, node: StoredNode): ManagedLedgerInfo {
  try {
    return fromBinary(ManagedLedgerInfoSchema, node.value);
  } catch (error) {
    throw new LedgerlineError(
      'DATA_LOSS',
      CollectorReason.CORRUPT_METADATA,
      `ManagedLedgerInfo at ${path} does not decode`,
      {
        cause: error,
        details: { path },
      },
    );
  }
}

function syncTable(ctx: CollectorContext, path: string, markers: readonly DeletableLedger[]): void {
  ctx.table.sync(
    path,
    markers.map((marker) => ({
      ledgerId: Number(marker.ledgerId),
      managedLedgerPath: path,
      component: marker.component === LedgerComponent.CURSOR ? ('cursor' as const) : ('managed-ledger' as const),
      ...(marker.cursorName === '' ? {} : { cursorName: marker.cursorName }),
      markedAtMs: Number(marker.markedAtMs),
    })),
  );
}

async function finishIfDeleting(
  ctx: CollectorContext,
  path: string,
  node: StoredNode,
  info: ManagedLedgerInfo,
  counts: PassCounts,
): Promise<CollectionOutcome> {
  ctx.table.forgetPath(path);
  if (info.state !== ManagedLedgerState.DELETING) return 'no-markers';
  const outcome = await ctx.metadata.finishTopicDeletion(path, node.version);
  if (outcome === 'changed') return 'pending';
  if (outcome === 'removed') {
    counts.topicsFinished++;
    ctx.metrics.topicsFinished.inc();
    ctx.logger.info({ managedLedger: path }, 'deleted topic finished: every ledger and its node are gone');
  }
  return 'finished';
}

/**
 * Every ledger the managed ledger still reads: its ledger list and each
 * cursor's ledger. A marked ledger among them is never deleted.
 */
async function referencedLedgers(ctx: CollectorContext, path: string, info: ManagedLedgerInfo): Promise<Set<number>> {
  const referenced = new Set(info.ledgerInfo.map((l) => Number(l.ledgerId)));
  await addCursorLedgers(ctx, path, referenced);
  return referenced;
}

async function deleteMarked(
  ctx: CollectorContext,
  path: string,
  marker: DeletableLedger,
  referenced: ReadonlySet<number>,
  counts: PassCounts,
): Promise<LedgerOutcome> {
  const ledgerId = Number(marker.ledgerId);
  if (referenced.has(ledgerId)) {
    ctx.logger.warn(
      { managedLedger: path, ledgerId },
      'a ledger marked deletable is referenced again (ledger list or cursor): marker dropped, ledger kept',
    );
    return 'referenced';
  }
  try {
    const info = await ctx.ledgerStore.info(ledgerId);
    if (info === undefined) return 'gone';
    const mismatch = ownerTagMismatch(info, path, marker);
    if (mismatch !== undefined) {
      refuse(ctx, path, ledgerId, mismatch, counts);
      return 'refused';
    }
    await ctx.ledgerStore.delete(ledgerId);
    return 'deleted';
  } catch (error) {
    recordFailure(ctx, path, ledgerId, error, counts);
    return 'failed';
  }
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

function refuse(ctx: CollectorContext, path: string, ledgerId: number, why: string, counts: PassCounts): void {
  const pending = ctx.table.get(ledgerId);
  if (pending === undefined) return;
  const first = pending.refusedReason === undefined;
  pending.refusedReason = CollectorReason.OWNER_TAG_MISMATCH;
  pending.lastError = why;
  schedule(ctx, pending);
  if (!first) return;
  counts.ownerTagMismatches++;
  ctx.metrics.ownerTagMismatches.inc();
  ctx.logger.error(
    { managedLedger: path, ledgerId, reason: CollectorReason.OWNER_TAG_MISMATCH, why },
    'refusing to delete a marked ledger whose owner tags do not match the marker; a person must look',
  );
}

function recordFailure(ctx: CollectorContext, path: string, ledgerId: number, error: unknown, counts: PassCounts) {
  counts.failures++;
  ctx.metrics.deletionFailures.inc();
  const pending = ctx.table.get(ledgerId);
  if (pending === undefined) return;
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
}

function schedule(ctx: CollectorContext, pending: PendingDeletion): void {
  pending.attempts++;
  const delay = retryDelayMs(pending.attempts, ctx.config.retryBaseDelayMs, ctx.config.retryMaxDelayMs, ctx.random);
  pending.nextAttemptAtMs = ctx.now() + delay;
}

/**
 * Removes the markers in `done` by compare-and-set, starting from the node
 * read at the start; on BAD_VERSION (the owner wrote, or another collector)
 * re-reads and retries. Returns the markers this compare-and-set removed
 * (another collector may have removed some first: those are not ours to count).
 */
async function clearMarkers(
  ctx: CollectorContext,
  path: string,
  first: StoredNode,
  done: ReadonlySet<number>,
): Promise<{ node: StoredNode; info: ManagedLedgerInfo; removed: number[] } | undefined> {
  let node: StoredNode | undefined = first;
  return backOff(
    async () => {
      if (node === undefined) node = await ctx.metadata.get(path);
      if (node === undefined) return undefined;
      const info = decodeInfo(path, node);
      const removed = info.deletableLedgers.map((d) => Number(d.ledgerId)).filter((id) => done.has(id));
      if (removed.length === 0) return { node, info, removed };
      info.deletableLedgers = info.deletableLedgers.filter((d) => !done.has(Number(d.ledgerId)));
      const value = toBinary(ManagedLedgerInfoSchema, info);
      const read = node;
      node = undefined;
      const version = await ctx.metadata.put(path, value, read.version);
      return { node: { value, version }, info, removed };
    },
    {
      numOfAttempts: MARKER_CAS_ATTEMPTS,
      startingDelay: 2,
      maxDelay: 200,
      jitter: 'full',
      retry: (error: unknown) => isBadVersionError(error),
    },
  );
}

export async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
