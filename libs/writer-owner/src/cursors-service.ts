import { LedgerlineError } from '@ledgerline/errors';
import type { EntryRange, Position } from '@ledgerline/cursor-codec';
import type { CursorStart, ManagedCursor } from '@ledgerline/managed-ledger';
import { checkSubscriptionName, OwnerReason, positionFromRequest, safeNumber } from '@ledgerline/ownership';
import {
  CursorsService,
  InitialPosition,
  type BatchAckState,
  type CursorReset,
  type EntryRange as ProtoEntryRange,
  type UpdateCursorRequest,
} from '@ledgerline/proto';
import type { ServiceImpl } from '@ledgerline/rpc';
import { ackedRanges, cursorSummary } from './cursor-pages.js';
import { cursorData, existing } from './cursor-data.js';
import type { OwnedTopic } from './owned-topic.js';
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

/** Properties for openCursor, which sets them on a cursor it creates, in the creation's write. */
function creationProperties(properties: Record<string, bigint>, cursorProperties: Record<string, string>) {
  return {
    properties: new Map(Object.entries(properties)),
    cursorProperties: new Map(Object.entries(cursorProperties)),
  };
}

/** Where a reset goes: its position, or the entry holding its offset; one of the two. */
function resetTarget(reset: CursorReset): { position: Position } | { offset: number } {
  if ((reset.position === undefined) === (reset.offset === undefined)) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'a reset gives a position or an offset');
  }
  if (reset.offset !== undefined) {
    const offset = safeNumber(reset.offset, 'reset.offset');
    if (offset < 0) {
      throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, `reset.offset ${offset} is negative`);
    }
    return { offset };
  }
  return { position: positionFromRequest(reset.position, 'reset.position') };
}

/**
 * A reset: the cursor moves to the target, its properties set by the same
 * write, so that a Kafka group's commit is answered once the committed
 * offset kept here is stored, not when the next snapshot would have stored
 * it. With `create`, a cursor that does not exist is created there first (a
 * group's first commit on a partition): one call and one write for a
 * commit, where a create, a FindPosition and a reset took two round trips.
 * `any_epoch` skips the epoch check, for a caller that orders its overwrites
 * itself.
 */
async function reset(topic: OwnedTopic, request: UpdateCursorRequest, value: CursorReset): Promise<ManagedCursor> {
  const target = resetTarget(value);
  const epoch = value.anyEpoch ? undefined : safeNumber(value.expectedResetEpoch, 'expected_reset_epoch');
  const name = checkSubscriptionName(request.subscription);
  // A cursor created here starts at the target; the seek below sets the properties (and wins over another
  // create at the same moment, whose start would otherwise hold). A group's first commit writes twice.
  if (request.create) await topic.ledger.openCursor(name, { start: target });
  const cursor = existing(topic, request.subscription);
  await cursor.seek(target, epoch, { properties: request.properties, cursorProperties: request.cursorProperties });
  return cursor;
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
      // The properties go with the creation, in its one write (they are set only on a cursor created here).
      const cursor = await topic.ledger.openCursor(name, {
        start: startOf(request.start),
        ...creationProperties(request.properties, request.cursorProperties),
      });
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
      const answer = (updated: ManagedCursor) => cursorData(updated.exportState(!request.withoutRanges));
      checkCursorProperties(request.cursorProperties);
      const update = request.update;
      if (update.case === 'reset') return { cursor: answer(await reset(topic, request, update.value)) };
      if (request.create) {
        throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, 'create goes with a reset');
      }
      const cursor = existing(topic, request.subscription);
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
