import { isFieldSet } from '@bufbuild/protobuf';
import { LedgerInfoSchema, type LedgerInfo } from '@ledgerline/proto';
import { LedgerlineError, invalidArgument } from '@ledgerline/errors';
import { LedgerOffsetIndex } from './ledger-offset-index.js';
import type { TopicLedger } from './topic-ledger.js';
import { OffsetIndexReason } from './errors.js';

/** The LedgerInfo fields (100..105) a managed ledger writes when it closes a ledger, from that ledger's index. */
export interface LedgerInfoOffsetFields {
  entries: bigint;
  firstOffset: bigint;
  lastOffset: bigint;
  minBrokerTimestampMs: bigint;
  maxBrokerTimestampMs: bigint;
  offsetIndex: Uint8Array;
  maxEventTimeMs: bigint;
}

export function ledgerInfoOffsetFields(index: LedgerOffsetIndex): LedgerInfoOffsetFields {
  return {
    entries: BigInt(index.entryCount),
    firstOffset: BigInt(index.firstOffset),
    lastOffset: BigInt(index.lastOffset),
    minBrokerTimestampMs: BigInt(Math.max(index.minTimestamp, 0)),
    maxBrokerTimestampMs: BigInt(Math.max(index.maxTimestamp, 0)),
    offsetIndex: index.serialize(),
    maxEventTimeMs: BigInt(Math.max(index.maxEventTime, 0)),
  };
}

/**
 * What the topic index needs from a stored LedgerInfo. A ledger stored
 * without offsets (written before offsets existed) is FAILED_PRECONDITION /
 * LEDGER_WITHOUT_OFFSETS; one without a serialized index gets none, and the
 * caller may rebuild it with `LedgerOffsetIndex.rebuild`.
 */
export function topicLedgerFromLedgerInfo(info: LedgerInfo): TopicLedger {
  const ledgerId = toSafeNumber(info.ledgerId, 'ledgerId');
  if (!isFieldSet(info, LedgerInfoSchema.field.firstOffset) || !isFieldSet(info, LedgerInfoSchema.field.lastOffset)) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      OffsetIndexReason.LEDGER_WITHOUT_OFFSETS,
      `ledger ${ledgerId} has no first and last offset in its LedgerInfo`,
      { details: { ledgerId: String(ledgerId) } },
    );
  }
  const ledger: TopicLedger = {
    ledgerId,
    entries: toSafeNumber(info.entries, 'entries'),
    firstOffset: toSafeNumber(info.firstOffset, 'firstOffset'),
    lastOffset: toSafeNumber(info.lastOffset, 'lastOffset'),
    minTimestamp: toSafeNumber(info.minBrokerTimestampMs, 'minBrokerTimestampMs'),
    maxTimestamp: toSafeNumber(info.maxBrokerTimestampMs, 'maxBrokerTimestampMs'),
  };
  // A ledger closed before event times has none: its broker timestamps stand in (TopicLedger.maxEventTime).
  if (isFieldSet(info, LedgerInfoSchema.field.maxEventTimeMs)) {
    ledger.maxEventTime = toSafeNumber(info.maxEventTimeMs, 'maxEventTimeMs');
  }
  if (info.offsetIndex.length > 0) ledger.index = LedgerOffsetIndex.deserialize(info.offsetIndex);
  return ledger;
}

function toSafeNumber(value: bigint, name: string): number {
  if (value < -1n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidArgument(OffsetIndexReason.INVALID_LEDGER_SUMMARY, `LedgerInfo.${name} = ${value} is out of range`, {
      field: name,
    });
  }
  return Number(value);
}
