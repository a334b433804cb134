import { LedgerlineError } from '@ledgerline/errors';
import type { EntryRange } from '@ledgerline/cursor-codec';
import type { CursorStart, ManagedCursor } from '@ledgerline/managed-ledger';
import { checkSubscriptionName, OwnerReason, positionFromRequest, safeNumber } from '@ledgerline/ownership';
import {
  CursorsService,
  InitialPosition,
  type BatchAckState,
  type EntryRange as ProtoEntryRange,
} from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import { ackedRanges, cursorSummary } from './cursor-pages.js';
import { cursorData, existing } from './cursor-data.js';
import type { CursorsOwner } from './owner-view.js';

/**
 * Longest value of a string cursor property, in UTF-16 code units: ample for
 * a Kafka group's commit metadata (Kafka's offset.metadata.max.bytes is 4096
 * by default), and a bound on what one call adds to every cursor snapshot.
 */
export const MAX_CURSOR_PROPERTY_VALUE_LENGTH = 16 * 1024;

function rangeFromRequest(range: ProtoEntryRange): EntryRange {
  return {
    ledgerId: safeNumber(range.ledgerId, 'acked_ranges.ledger_id'),
    firstEntryId: safeNumber(range.firstEntryId, 'acked_ranges.first_entry_id'),
    lastEntryId: safeNumber(range.lastEntryId, 'acked_ranges.last_entry_id'),
  };
}

function batchFromRequest(batch: BatchAckState) {
  return {
    position: positionFromRequest(batch.position, 'batch_acks.position'),
    ackedIndexes: [...batch.ackedIndexes],
    batchSize: batch.batchSize,
  };
}

/** Refuses an oversized string property before anything of the request is applied. */
function checkCursorProperties(cursorProperties: Record<string, string>): void {
  for (const [name, value] of Object.entries(cursorProperties)) {
    if (value.length > MAX_CURSOR_PROPERTY_VALUE_LENGTH) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        OwnerReason.INVALID_REQUEST,
        `cursor property ${name} is ${value.length} characters, more than ${MAX_CURSOR_PROPERTY_VALUE_LENGTH}`,
      );
    }
  }
}

function setProperties(
  cursor: ManagedCursor,
  properties: Record<string, bigint>,
  cursorProperties: Record<string, string>,
): void {
  for (const [name, value] of Object.entries(properties)) cursor.setProperty(name, value);
  for (const [name, value] of Object.entries(cursorProperties)) cursor.setCursorProperty(name, value);
}

function startOf(start: { case: string | undefined; value?: unknown }): CursorStart {
  switch (start.case) {
    case 'position':
      return { position: positionFromRequest(start.value as never) };
    case 'offset':
      return { offset: safeNumber(start.value as bigint, 'offset') };
    case 'initialPosition':
      return { initialPosition: start.value === InitialPosition.EARLIEST ? 'earliest' : 'latest' };
    default:
      return { initialPosition: 'latest' };
  }
}

/**
 * ledgerline.v1.CursorsService (PIP-63): read-only owners keep no cursor
 * ledger and send cursor changes here, to the owner of the writer topic. Ack
 * deltas merge by union, so they combine with this owner's own consumers'
 * acks; resets are a versioned overwrite by epoch. Every answer carries the
 * managed ledger's version and last confirmed entry (PIP-63's waitSync).
 */
export function cursorsServiceImpl(owner: CursorsOwner): ServiceImpl<typeof CursorsService> {
  return {
    async getCursor(request) {
      const topic = await owner.topic(request.topic);
      return { cursor: cursorData(existing(topic, request.subscription).exportState()) };
    },

    getCursorSummary: (request) => cursorSummary(owner, request),
    listAckedRanges: (request) => ackedRanges(owner, request),

    async createCursor(request) {
      const topic = await owner.topic(request.topic);
      const name = checkSubscriptionName(request.subscription);
      checkCursorProperties(request.cursorProperties);
      const created = topic.ledger.getCursor(name) === undefined;
      const cursor = await topic.ledger.openCursor(name, { start: startOf(request.start) });
      if (created) setProperties(cursor, request.properties, request.cursorProperties);
      return { cursor: cursorData(cursor.exportState(!request.withoutRanges)), created };
    },

    async deleteCursor(request) {
      const topic = await owner.topic(request.topic);
      const name = checkSubscriptionName(request.subscription);
      if (owner.connectedConsumers(topic, name) > 0) {
        throw new LedgerlineError(
          'FAILED_PRECONDITION',
          OwnerReason.SUBSCRIPTION_BUSY,
          `cursor ${name} has consumers connected to this owner`,
        );
      }
      await owner.unsubscribed(topic, name);
      await topic.ledger.deleteCursor(name);
      return {};
    },

    async updateCursor(request) {
      const topic = await owner.topic(request.topic);
      const cursor = existing(topic, request.subscription);
      const answer = (updated: ManagedCursor) => cursorData(updated.exportState(!request.withoutRanges));
      checkCursorProperties(request.cursorProperties);
      const update = request.update;
      if (update.case === 'delta') {
        const delta = update.value;
        cursor.applyAckDelta({
          ackedRanges: delta.ackedRanges.map(rangeFromRequest),
          ...(delta.markDelete === undefined
            ? {}
            : { markDelete: positionFromRequest(delta.markDelete, 'mark_delete') }),
          batchAcks: delta.batchAcks.map(batchFromRequest),
          resetEpoch: safeNumber(delta.resetEpoch, 'reset_epoch'),
        });
      } else if (update.case === 'reset') {
        const reset = update.value;
        // The properties go with the move, in its one write: a Kafka group's commit is answered once the
        // committed offset it keeps here is stored, not when the next snapshot would have stored it.
        await cursor.seek(
          { position: positionFromRequest(reset.position, 'reset.position') },
          safeNumber(reset.expectedResetEpoch, 'expected_reset_epoch'),
          { properties: request.properties, cursorProperties: request.cursorProperties },
        );
        return { cursor: answer(cursor) };
      } else if (Object.keys(request.properties).length + Object.keys(request.cursorProperties).length === 0) {
        throw new LedgerlineError(
          'INVALID_ARGUMENT',
          OwnerReason.INVALID_REQUEST,
          'give a delta, a reset or properties',
        );
      }
      setProperties(cursor, request.properties, request.cursorProperties);
      return { cursor: answer(cursor) };
    },
  };
}
