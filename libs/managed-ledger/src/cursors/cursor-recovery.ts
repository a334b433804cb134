import {
  AckSet,
  createCursorState,
  decodeCursorState,
  recoverSnapshot,
  type CursorState,
} from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import type { LedgerContext } from '../context.js';
import { NO_CURSOR_LEDGER, type CursorInfoModel } from './cursor-info.js';
import { fenceAndClose } from '../ledgers/ledger-factory.js';

/** Entries a cursor-ledger recovery may read, chunks included. */
const MAX_RECOVERY_SCAN_ENTRIES = 65_536;

export interface RecoveredCursorState {
  state: CursorState;
  /** How the state was found, for logs and tests. */
  source: 'inline' | 'ledger' | 'node-position';
  /** True when a newer snapshot was corrupt or unreadable and an older state was used. */
  fellBack: boolean;
}

/**
 * A cursor's state after a restart: from the node when it holds the state,
 * else from the newest complete snapshot in the cursor ledger (fenced first,
 * so a previous owner can write no more). A corrupt snapshot falls back to
 * the one before it; an unreadable ledger falls back to the node's
 * mark-delete position. Every fallback is logged and counted: the acks lost
 * are redelivered, never silently dropped.
 */
export async function recoverCursorState(
  ctx: LedgerContext,
  cursorName: string,
  node: CursorInfoModel,
): Promise<RecoveredCursorState> {
  if (node.cursorsLedgerId === NO_CURSOR_LEDGER) {
    if (node.inlineSnapshot === undefined || node.inlineSnapshot.length === 0)
      return fromNode(node, 'node-position', false);
    try {
      return {
        state: withNodeProperties(decodeCursorState(node.inlineSnapshot), node),
        source: 'inline',
        fellBack: false,
      };
    } catch (err) {
      reportFallback(ctx, cursorName, 'the inline snapshot does not decode', err);
      return fromNode(node, 'node-position', true);
    }
  }
  try {
    const lastEntryId = await fenceAndClose(ctx.store, node.cursorsLedgerId);
    const found = await recoverSnapshot(
      async (entryId) => (await ctx.store.read(node.cursorsLedgerId, entryId, entryId))[0]!.data,
      lastEntryId,
      { onCorrupt: 'fallback', maxScanEntries: MAX_RECOVERY_SCAN_ENTRIES },
    );
    if (found === null) return fromNode(node, 'node-position', false);
    if (found.fellBack) {
      const problems = found.skippedCorrupt.map((c) => `entry ${c.entryId}: ${c.problem}`).join('; ');
      reportFallback(ctx, cursorName, `newer snapshots were corrupt (${problems})`, undefined);
    }
    return {
      state: withNodeProperties(decodeCursorState(found.bytes), node),
      source: 'ledger',
      fellBack: found.fellBack,
    };
  } catch (err) {
    if (isUnavailable(err)) throw err;
    reportFallback(ctx, cursorName, `cursor ledger ${node.cursorsLedgerId} gave no usable snapshot`, err);
    return fromNode(node, 'node-position', true);
  }
}

/** Pulsar's formats carry no string properties: the node's are the truth for those. */
function withNodeProperties(state: CursorState, node: CursorInfoModel): CursorState {
  for (const [name, value] of node.cursorProperties) {
    if (!state.cursorProperties.has(name)) state.cursorProperties.set(name, value);
  }
  return state;
}

function fromNode(
  node: CursorInfoModel,
  source: RecoveredCursorState['source'],
  fellBack: boolean,
): RecoveredCursorState {
  const state = createCursorState({
    markDelete: node.markDelete,
    acked: new AckSet(),
    properties: new Map(node.properties),
    cursorProperties: new Map(node.cursorProperties),
  });
  return { state, source, fellBack };
}

function reportFallback(ctx: LedgerContext, cursor: string, why: string, err: unknown): void {
  ctx.metrics.cursorSnapshotFallbacks.inc({ topic: ctx.topic, cursor });
  ctx.logger.warn(
    { topic: ctx.topic, cursor, error: err === undefined ? undefined : String(err) },
    `cursor recovery fell back: ${why}; acknowledgements after the state used are redelivered`,
  );
}

/** A store that is down is retried by the caller, not papered over with a fallback. */
function isUnavailable(err: unknown): boolean {
  return err instanceof LedgerlineError && err.code === 'UNAVAILABLE';
}
