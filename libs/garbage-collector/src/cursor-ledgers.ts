import { fromBinary } from '@bufbuild/protobuf';
import { ManagedCursorInfoSchema } from '@ledgerline/proto';
import type { CollectorContext } from './collector-context.js';

/** Cursor nodes listed per page when checking references. */
const CURSOR_PAGE = 1_000;

/**
 * Adds the ledger each cursor of a managed ledger keeps its snapshots in:
 * deleting marked ledgers and sweeping orphans must both keep these.
 */
export async function addCursorLedgers(ctx: CollectorContext, path: string, referenced: Set<number>): Promise<void> {
  let after: string | undefined;
  do {
    const page = await ctx.metadata.children(path, after, CURSOR_PAGE);
    for (const name of page.names) {
      const cursor = await ctx.metadata.get(`${path}/${name}`);
      if (cursor === undefined) continue;
      const cursorsLedgerId = fromBinary(ManagedCursorInfoSchema, cursor.value).cursorsLedgerId;
      if (cursorsLedgerId > 0n) referenced.add(Number(cursorsLedgerId));
    }
    after = page.next;
  } while (after !== undefined);
}
