import { fromBinary } from '@bufbuild/protobuf';
import { encodePendingDeletionEntry, pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import { MANAGED_LEDGERS_ROOT } from '@ledgerline/naming';
import { ManagedLedgerInfoSchema } from '@ledgerline/proto';
import type { CollectorContext } from './collector-context.js';
import { isBadVersionError } from './errors.js';

/** Child names per listing page during a full scan. */
const SCAN_PAGE = 1_000;

export interface FullScanResult {
  managedLedgers: number;
  /** Managed ledgers holding markers the index did not name (now indexed). */
  unindexed: number;
}

/**
 * The backstop (rate-limited; O(topics)): reads every managed ledger under
 * `/managed-ledgers/<tenant>/<ns>/<domain>[/$<bucket>]/<topic>` and indexes
 * the ones with markers the index misses. The index is written before every
 * marker, so finding one means a bug elsewhere: it is logged.
 */
export async function fullScan(ctx: CollectorContext): Promise<FullScanResult> {
  const result: FullScanResult = { managedLedgers: 0, unindexed: 0 };
  for (const tenant of await listAll(ctx, MANAGED_LEDGERS_ROOT)) {
    const tenantDir = `${MANAGED_LEDGERS_ROOT}/${tenant}`;
    for (const namespace of await listAll(ctx, tenantDir)) {
      const namespaceDir = `${tenantDir}/${namespace}`;
      for (const domain of await listAll(ctx, namespaceDir)) {
        await scanTopics(ctx, `${namespaceDir}/${domain}`, result, true);
      }
    }
  }
  return result;
}

async function scanTopics(ctx: CollectorContext, dir: string, result: FullScanResult, bucketsBelow: boolean) {
  let after: string | undefined;
  do {
    const page = await ctx.metadata.children(dir, after, SCAN_PAGE);
    for (const name of page.names) {
      // Encoded topic names never start with `$`: such a child is a PIP-157 bucket directory.
      if (bucketsBelow && name.startsWith('$')) await scanTopics(ctx, `${dir}/${name}`, result, false);
      else await checkManagedLedger(ctx, `${dir}/${name}`, result);
    }
    after = page.next;
  } while (after !== undefined);
}

async function checkManagedLedger(ctx: CollectorContext, path: string, result: FullScanResult) {
  const node = await ctx.metadata.get(path);
  if (node === undefined) return;
  result.managedLedgers++;
  let markers: number;
  try {
    markers = fromBinary(ManagedLedgerInfoSchema, node.value).deletableLedgers.length;
  } catch {
    ctx.logger.error({ managedLedger: path }, 'full scan: ManagedLedgerInfo does not decode; skipped');
    return;
  }
  if (markers === 0) return;
  const entryPath = pendingDeletionEntryPath(path);
  if ((await ctx.metadata.get(entryPath)) !== undefined) return;
  try {
    await ctx.metadata.put(
      entryPath,
      encodePendingDeletionEntry({ managedLedgerPath: path, indexedAtMs: ctx.now() }),
      'absent',
    );
  } catch (error) {
    if (!isBadVersionError(error)) throw error;
  }
  result.unindexed++;
  ctx.logger.warn({ managedLedger: path, markers }, 'full scan found markers the pending-deletions index missed');
}

async function listAll(ctx: CollectorContext, dir: string): Promise<string[]> {
  const names: string[] = [];
  let after: string | undefined;
  do {
    const page = await ctx.metadata.children(dir, after, SCAN_PAGE);
    names.push(...page.names);
    after = page.next;
  } while (after !== undefined);
  return names;
}
