import { fromBinary, toBinary } from '@bufbuild/protobuf';
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
import { deleteMarkedLedgers } from './ledger-deletion.js';

/** Attempts of the marker compare-and-set when others keep changing the node (the owner, another collector). */
const MARKER_CAS_ATTEMPTS = 20;

export type CollectionOutcome = 'missing' | 'finished' | 'no-markers' | 'pending';

/**
 * Collects one managed ledger (PIP-129 phase 2): deletes the marked ledgers
 * that are due, in batches (ledger-deletion.ts: none referenced, owner tags
 * checked, already gone counts as done), and only then removes the finished
 * markers with one compare-and-set on the version read (re-read and retried
 * on BAD_VERSION). A deleted topic whose last marker is gone has its node removed.
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
  const outcomes = await deleteMarkedLedgers(ctx, path, due, referenced, counts);
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
