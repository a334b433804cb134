import { type Position } from '@ledgerline/cursor-codec';
import { create, isFieldSet } from '@bufbuild/protobuf';
import {
  DeletableLedgerSchema,
  KeyValueSchema,
  LedgerComponent,
  LedgerInfoSchema,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
  type DeletableLedger,
  type KeyValue,
  type LedgerInfo,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import { corruptInfoError } from './reasons.js';
import { int64ToNumber, positionFromProto, positionToProto } from './stored-numbers.js';

/**
 * One ledger of a managed ledger as this lib works with it: LedgerInfo with
 * numbers instead of int64 and presence made explicit. A ledger is closed
 * once `closedAtMs` is set (Pulsar sets LedgerInfo.timestamp when it closes).
 */
export interface LedgerSummary {
  ledgerId: number;
  /** Entries the managed ledger owns in this ledger; 0 while it is the open ledger. */
  entries: number;
  sizeBytes: number;
  closedAtMs?: number;
  /** Offset of the first message written to this ledger: known when it is created. */
  firstOffset: number;
  /** Offset of the last message; firstOffset - 1 for an empty ledger. Set at close. */
  lastOffset?: number;
  minBrokerTimestampMs?: number;
  maxBrokerTimestampMs?: number;
  /**
   * The largest event-time key of the ledger's entries (LedgerInfo field 105),
   * set at close; absent for ledgers closed before it, whose broker
   * timestamps stand in.
   */
  maxEventTimeMs?: number;
  /** The sparse offset index (offset-index's LedgerOffsetIndex bytes), stored at close. */
  offsetIndex?: Uint8Array;
  properties: Map<string, string>;
}

export type ManagedLedgerStateName = 'active' | 'terminated' | 'deleting';

export type LedgerComponentName = 'managed-ledger' | 'cursor';

/** A ledger marked for the garbage collector (PIP-129 phase 1). */
export interface DeletableLedgerRecord {
  ledgerId: number;
  component: LedgerComponentName;
  cursorName?: string;
  markedAtMs: number;
}

export interface ManagedLedgerInfoModel {
  ledgers: LedgerSummary[];
  terminatedPosition?: Position;
  properties: Map<string, string>;
  state: ManagedLedgerStateName;
  deletableLedgers: DeletableLedgerRecord[];
}

/**
 * The ManagedLedgerInfo property holding the offset of the last message the
 * managed ledger acknowledged: Pulsar's AppendIndexMetadataInterceptor key,
 * so the value means the same thing in both systems.
 */
export const INDEX_PROPERTY = 'index';

/**
 * The LedgerInfo property holding the per-entry message counts of a closed
 * ledger (offset-tables.ts of @ledgerline/managed-ledger reads it).
 */
export const ENTRY_COUNTS_PROPERTY = 'ledgerline.entry-counts';

/**
 * The ManagedLedgerInfo property holding the low watermark: the first offset
 * a reader may read, set by deleting records before an offset (Kafka's
 * DeleteRecords). Absent until records were deleted so. Offsets below it are
 * trimmed even where their ledger is still kept (it holds offsets at or above
 * it too); a property, so the stored format does not change.
 */
export const LOW_WATERMARK_PROPERTY = 'ledgerline.low-watermark';

export function emptyManagedLedgerInfo(): ManagedLedgerInfoModel {
  return { ledgers: [], properties: new Map([[INDEX_PROPERTY, '-1']]), state: 'active', deletableLedgers: [] };
}

/** The offset of the last acknowledged message as stored, -1 when none. */
export function storedLastOffset(info: ManagedLedgerInfoModel): number {
  const raw = info.properties.get(INDEX_PROPERTY);
  const value = raw === undefined ? -1 : Number(raw);
  if (!Number.isSafeInteger(value) || value < -1) {
    throw corruptInfoError('ManagedLedgerInfo property "index"', new Error(`not an offset: ${raw}`));
  }
  return value;
}

/** The low watermark as stored (LOW_WATERMARK_PROPERTY), 0 when records were never deleted so. */
export function storedLowWatermark(info: ManagedLedgerInfoModel): number {
  const raw = info.properties.get(LOW_WATERMARK_PROPERTY);
  const value = raw === undefined ? 0 : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw corruptInfoError(
      `ManagedLedgerInfo property "${LOW_WATERMARK_PROPERTY}"`,
      new Error(`not an offset: ${raw}`),
    );
  }
  return value;
}

export function cloneInfo(info: ManagedLedgerInfoModel): ManagedLedgerInfoModel {
  return {
    ledgers: info.ledgers.map((l) => ({ ...l, properties: new Map(l.properties) })),
    ...(info.terminatedPosition === undefined ? {} : { terminatedPosition: info.terminatedPosition }),
    properties: new Map(info.properties),
    state: info.state,
    deletableLedgers: info.deletableLedgers.map((d) => ({ ...d })),
  };
}

export function infoFromProto(proto: ManagedLedgerInfo): ManagedLedgerInfoModel {
  try {
    const terminated = positionFromProto(proto.terminatedPosition, 'terminatedPosition');
    return {
      ledgers: proto.ledgerInfo.map(ledgerFromProto),
      ...(terminated === undefined ? {} : { terminatedPosition: terminated }),
      properties: propertiesFromProto(proto.properties),
      state: stateFromProto(proto.state),
      deletableLedgers: proto.deletableLedgers.map(deletableFromProto),
    };
  } catch (err) {
    throw corruptInfoError('ManagedLedgerInfo', err);
  }
}

export function infoToProto(info: ManagedLedgerInfoModel): ManagedLedgerInfo {
  return create(ManagedLedgerInfoSchema, {
    ledgerInfo: info.ledgers.map(ledgerToProto),
    ...(info.terminatedPosition === undefined ? {} : { terminatedPosition: positionToProto(info.terminatedPosition) }),
    properties: propertiesToProto(info.properties),
    state: stateToProto(info.state),
    deletableLedgers: info.deletableLedgers.map(deletableToProto),
  });
}

function ledgerFromProto(l: LedgerInfo): LedgerSummary {
  const has = (field: keyof typeof LedgerInfoSchema.field) => isFieldSet(l, LedgerInfoSchema.field[field]);
  if (!has('ledgerId')) throw new Error('a LedgerInfo has no ledger_id');
  const ledgerId = int64ToNumber(l.ledgerId, 'LedgerInfo.ledgerId');
  const summary: LedgerSummary = {
    ledgerId,
    entries: int64ToNumber(l.entries, 'LedgerInfo.entries'),
    sizeBytes: int64ToNumber(l.size, 'LedgerInfo.size'),
    firstOffset: int64ToNumber(l.firstOffset, 'LedgerInfo.firstOffset'),
    properties: propertiesFromProto(l.properties),
  };
  if (has('timestamp')) summary.closedAtMs = int64ToNumber(l.timestamp, 'LedgerInfo.timestamp');
  if (has('lastOffset')) summary.lastOffset = int64ToNumber(l.lastOffset, 'LedgerInfo.lastOffset');
  if (has('minBrokerTimestampMs')) summary.minBrokerTimestampMs = int64ToNumber(l.minBrokerTimestampMs, 'min ts');
  if (has('maxBrokerTimestampMs')) summary.maxBrokerTimestampMs = int64ToNumber(l.maxBrokerTimestampMs, 'max ts');
  if (has('maxEventTimeMs')) summary.maxEventTimeMs = int64ToNumber(l.maxEventTimeMs, 'max event time');
  if (has('offsetIndex')) summary.offsetIndex = l.offsetIndex;
  return summary;
}

function ledgerToProto(l: LedgerSummary): LedgerInfo {
  return create(LedgerInfoSchema, {
    ledgerId: BigInt(l.ledgerId),
    entries: BigInt(l.entries),
    size: BigInt(l.sizeBytes),
    firstOffset: BigInt(l.firstOffset),
    properties: propertiesToProto(l.properties),
    ...(l.closedAtMs === undefined ? {} : { timestamp: BigInt(l.closedAtMs) }),
    ...(l.lastOffset === undefined ? {} : { lastOffset: BigInt(l.lastOffset) }),
    ...(l.minBrokerTimestampMs === undefined ? {} : { minBrokerTimestampMs: BigInt(l.minBrokerTimestampMs) }),
    ...(l.maxBrokerTimestampMs === undefined ? {} : { maxBrokerTimestampMs: BigInt(l.maxBrokerTimestampMs) }),
    ...(l.offsetIndex === undefined ? {} : { offsetIndex: l.offsetIndex }),
    ...(l.maxEventTimeMs === undefined ? {} : { maxEventTimeMs: BigInt(l.maxEventTimeMs) }),
  });
}

function propertiesFromProto(kvs: KeyValue[]): Map<string, string> {
  return new Map(kvs.map((kv) => [kv.key, kv.value]));
}

function propertiesToProto(properties: Map<string, string>): KeyValue[] {
  return [...properties].map(([key, value]) => create(KeyValueSchema, { key, value }));
}

function stateFromProto(state: ManagedLedgerState): ManagedLedgerStateName {
  if (state === ManagedLedgerState.TERMINATED) return 'terminated';
  if (state === ManagedLedgerState.DELETING) return 'deleting';
  return 'active';
}

function stateToProto(state: ManagedLedgerStateName): ManagedLedgerState {
  if (state === 'terminated') return ManagedLedgerState.TERMINATED;
  if (state === 'deleting') return ManagedLedgerState.DELETING;
  return ManagedLedgerState.ACTIVE;
}

function deletableFromProto(d: DeletableLedger): DeletableLedgerRecord {
  const record: DeletableLedgerRecord = {
    ledgerId: int64ToNumber(d.ledgerId, 'DeletableLedger.ledgerId'),
    component: d.component === LedgerComponent.CURSOR ? 'cursor' : 'managed-ledger',
    markedAtMs: int64ToNumber(d.markedAtMs, 'DeletableLedger.markedAtMs'),
  };
  if (d.cursorName !== '') record.cursorName = d.cursorName;
  return record;
}

function deletableToProto(d: DeletableLedgerRecord): DeletableLedger {
  return create(DeletableLedgerSchema, {
    ledgerId: BigInt(d.ledgerId),
    component: d.component === 'cursor' ? LedgerComponent.CURSOR : LedgerComponent.MANAGED_LEDGER,
    markedAtMs: BigInt(d.markedAtMs),
    ...(d.cursorName === undefined ? {} : { cursorName: d.cursorName }),
  });
}

/** Adds deletable markers, keeping one marker per ledger id. */
export function withDeletable(info: ManagedLedgerInfoModel, records: DeletableLedgerRecord[]): DeletableLedgerRecord[] {
  const known = new Set(info.deletableLedgers.map((d) => d.ledgerId));
  return [...info.deletableLedgers, ...records.filter((r) => !known.has(r.ledgerId))];
}

/**
 * The managed ledger a deleted topic leaves behind: state DELETING, no
 * ledgers to read, and every ledger (data and cursor) marked deletable, all
 * in the one value a single compare-and-set writes (PIP-129, "no marker can
 * vanish with its topic").
 */
export function markDeleting(
  info: ManagedLedgerInfoModel,
  cursorLedgers: { ledgerId: number; cursorName: string }[],
  nowMs: number,
): ManagedLedgerInfoModel {
  const next = cloneInfo(info);
  const records: DeletableLedgerRecord[] = [
    ...info.ledgers.map((l) => ({ ledgerId: l.ledgerId, component: 'managed-ledger' as const, markedAtMs: nowMs })),
    ...cursorLedgers.map((c) => ({ ...c, component: 'cursor' as const, markedAtMs: nowMs })),
  ];
  next.deletableLedgers = withDeletable(info, records);
  next.ledgers = [];
  next.state = 'deleting';
  return next;
}
