import { parsePositionKey, type CursorState } from '@ledgerline/cursor-codec';
import type { LedgerContext } from '../context.js';
import { offsetTable } from './backlog.js';
import type { LedgerView } from '../ledgers/ledger-views.js';

/**
 * Gives recovered batch acknowledgements their entries' real sizes back.
 * Pulsar's formats (which the encoder picks when they are smallest) store the
 * indexes of a batch still to deliver, not its size, so a batch whose last
 * indexes were acknowledged reads back shorter: batchSize is the highest
 * unacknowledged index + 1. The entry's message count, from its offsets,
 * restores them as acknowledged; without it the backlog would count them
 * again and every later acknowledgement naming the real size would be refused.
 */
export async function restoreBatchSizes(
  ctx: LedgerContext,
  views: readonly LedgerView[],
  state: CursorState,
): Promise<void> {
  for (const [key, batch] of state.batchAcks) {
    const position = parsePositionKey(key);
    if (position === undefined) continue;
    const table = await offsetTable(ctx, views, position.ledgerId);
    if (table === undefined || position.entryId < 0 || position.entryId >= table.entryCount) continue;
    const messages = table.messagesIn(position.entryId, position.entryId);
    if (messages <= batch.batchSize) continue;
    const trailing = Array.from({ length: messages - batch.batchSize }, (_, i) => batch.batchSize + i);
    state.batchAcks.set(key, { batchSize: messages, ackedIndexes: [...batch.ackedIndexes, ...trailing] });
  }
}
