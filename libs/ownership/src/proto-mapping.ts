import { LedgerlineError } from '@ledgerline/errors';
import { checkPosition, type CheckedPosition, type Position } from '@ledgerline/cursor-codec';
import type { LedgerView, ManagedLedgerEntry, SeekTarget } from '@ledgerline/managed-ledger';
import { decodeMessageEntry } from '@ledgerline/message-format';
import type { EntrySchema, LedgerStatsSchema, MessageSchema, Position as ProtoPosition } from '@ledgerline/proto';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { OwnerReason } from './reasons.js';

export function positionMessage(p: Position): { ledgerId: bigint; entryId: bigint } {
  return { ledgerId: BigInt(p.ledgerId), entryId: BigInt(p.entryId) };
}

/**
 * Ledgers GetTopicStats lists at most: a topic under long retention can hold
 * many thousands, and the answer must stay far below the gRPC message bound
 * (about 40 bytes a ledger). Past it the newest are kept, the ones a reader
 * of the topic page looks at.
 */
export const MAX_LEDGER_STATS = 10_000;

/** GetTopicStats' ledger list, oldest first, the newest MAX_LEDGER_STATS of them. */
export function ledgerStatsMessages(views: readonly LedgerView[]): MessageInitShape<typeof LedgerStatsSchema>[] {
  return views.slice(-MAX_LEDGER_STATS).map((view) => ({
    ledgerId: BigInt(view.ledgerId),
    entries: BigInt(view.entries),
    sizeBytes: BigInt(view.sizeBytes),
    firstOffset: BigInt(view.firstOffset),
    lastOffset: BigInt(view.lastOffset),
    open: view.open,
    closedAtMs: BigInt(view.closedAtMs ?? 0),
    minBrokerTimestampMs: BigInt(view.minBrokerTimestampMs ?? 0),
    maxBrokerTimestampMs: BigInt(view.maxBrokerTimestampMs ?? 0),
  }));
}

/** The first retained offset of a topic: its first ledger's first offset (the next offset when it has none). */
export function earliestOffset(views: readonly LedgerView[], nextOffset: number): number {
  return views[0]?.firstOffset ?? nextOffset;
}

/**
 * A position from a request, checked here once (present, ledgerId >= 0,
 * entryId >= -1: -1 is a ledger's "before the first entry", a legal
 * mark-delete or seek position) into the checked type the layers below take.
 * Positions that name an entry (acks, nacks) are checked by the stricter
 * rule, entryId >= 0, in subscriptions' checkAckRequest and checkPositions.
 */
export function positionFromRequest(p: ProtoPosition | undefined, what = 'position'): CheckedPosition {
  return checkPosition(p, what);
}

/** An int64 request field as a safe non-negative number. */
export function safeNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new LedgerlineError('INVALID_ARGUMENT', OwnerReason.INVALID_REQUEST, `${what} must be 0 to 2^53-1`);
  }
  return Number(value);
}

type MessageInit = MessageInitShape<typeof MessageSchema>;

/**
 * A stored entry's ordering key (Pulsar's partition_key of its MessageMetadata,
 * which Key_Shared dispatches by) and its messages as consumers receive them.
 * An entry that does not decode is handed out as one keyless raw message.
 */
export function entryContents(entry: ManagedLedgerEntry): { key: string | undefined; messages: MessageInit[] } {
  let decoded;
  try {
    decoded = decodeMessageEntry(entry.payload);
  } catch {
    return {
      key: undefined,
      messages: [{ payload: entry.payload, offset: BigInt(entry.firstOffset), batchIndex: -1 }],
    };
  }
  const messages = decoded.messages.map((m, index) => ({
    payload: m.payload,
    ...(m.key === undefined ? {} : { key: m.key }),
    properties: { ...m.properties },
    eventTimeMs: BigInt(m.eventTimeMs),
    publishTimeMs: BigInt(m.publishTimeMs),
    producerName: m.producerName,
    sequenceId: m.sequenceId,
    offset: BigInt(entry.firstOffset + index),
    batchIndex: m.batchIndex,
  }));
  return { key: decoded.header.key, messages };
}

export function entryMessages(entry: ManagedLedgerEntry): MessageInit[] {
  return entryContents(entry).messages;
}

/** A stored entry as a consumer or a fetch receives it; `skip` leaves out acknowledged batch indexes. */
export function entryMessage(
  entry: ManagedLedgerEntry,
  redeliveryCount = 0,
  skip?: (batchIndex: number) => boolean,
): MessageInitShape<typeof EntrySchema> {
  const messages = entryMessages(entry);
  return {
    position: positionMessage(entry.position),
    firstOffset: BigInt(entry.firstOffset),
    lastOffset: BigInt(entry.lastOffset),
    brokerTimestampMs: BigInt(entry.brokerTimestampMs),
    numMessages: entry.numMessages,
    redeliveryCount,
    messages: skip === undefined ? messages : messages.filter((m) => !skip(m.batchIndex ?? -1)),
  };
}

/** A Seek request's target as the managed ledger takes it; INVALID_REQUEST when it names none. */
export function seekTarget(target: { case: string | undefined; value?: unknown }): SeekTarget {
  switch (target.case) {
    case 'position':
      return { position: positionFromRequest(target.value as never) };
    case 'offset':
      return { offset: safeNumber(target.value as bigint, 'offset') };
    case 'timestampMs':
      return { timestampMs: safeNumber(target.value as bigint, 'timestamp_ms') };
    default:
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        OwnerReason.INVALID_REQUEST,
        'give a position, an offset or a time',
      );
  }
}
