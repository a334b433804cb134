import type { MessageInitShape } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import type { ExportedCursorState, ManagedCursor } from '@ledgerline/managed-ledger';
import { checkSubscriptionName, OwnerReason, positionMessage } from '@ledgerline/ownership';
import type { CursorDataSchema } from '@ledgerline/proto';
import type { OwnedTopic } from './owned-topic.js';

type CursorData = MessageInitShape<typeof CursorDataSchema>;

/** A cursor's state as CursorsService answers it. */
export function cursorData(state: ExportedCursorState): CursorData {
  const properties: Record<string, bigint> = {};
  for (const [name, value] of state.properties) properties[name] = BigInt(value);
  return {
    markDelete: positionMessage(state.markDelete),
    ackedRanges: state.ackedRanges.map((r) => ({
      ledgerId: BigInt(r.ledgerId),
      firstEntryId: BigInt(r.firstEntryId),
      lastEntryId: BigInt(r.lastEntryId),
    })),
    batchAcks: state.batchAcks.map((b) => ({
      position: positionMessage(b.position),
      ackedIndexes: b.ackedIndexes,
      batchSize: b.batchSize,
    })),
    properties,
    cursorProperties: Object.fromEntries(state.cursorProperties),
    managedLedgerVersion: BigInt(state.managedLedgerVersion),
    ...(state.lastConfirmedEntry === undefined
      ? {}
      : { lastConfirmedEntry: positionMessage(state.lastConfirmedEntry) }),
    resetEpoch: BigInt(state.resetEpoch),
  };
}

/** The topic's cursor of that name; NOT_FOUND / SUBSCRIPTION_NOT_FOUND when it has none. */
export function existing(topic: OwnedTopic, subscription: string): ManagedCursor {
  const cursor = topic.ledger.getCursor(checkSubscriptionName(subscription));
  if (cursor === undefined) {
    throw new LedgerlineError(
      'NOT_FOUND',
      OwnerReason.SUBSCRIPTION_NOT_FOUND,
      `${topic.name} has no cursor ${subscription}`,
      {
        details: { topic: topic.name, subscription },
      },
    );
  }
  return cursor;
}
