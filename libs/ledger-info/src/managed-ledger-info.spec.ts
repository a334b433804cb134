import { create, toBinary, fromBinary } from '@bufbuild/protobuf';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerInfoSchema, ManagedLedgerInfoSchema } from '@ledgerline/proto';
import {
  emptyManagedLedgerInfo,
  infoFromProto,
  infoToProto,
  markDeleting,
  storedLastOffset,
  storedLowWatermark,
  LOW_WATERMARK_PROPERTY,
  type ManagedLedgerInfoModel,
} from './managed-ledger-info.js';
import { LedgerInfoReason } from './reasons.js';

function sampleInfo(): ManagedLedgerInfoModel {
  const info = emptyManagedLedgerInfo();
  info.ledgers.push(
    { ledgerId: 3, entries: 2, sizeBytes: 40, closedAtMs: 1_000, firstOffset: 0, lastOffset: 4, properties: new Map() },
    { ledgerId: 7, entries: 0, sizeBytes: 0, firstOffset: 5, properties: new Map([['k', 'v']]) },
  );
  info.properties.set('index', '4');
  info.deletableLedgers.push({ ledgerId: 1, component: 'cursor', cursorName: 'sub', markedAtMs: 900 });
  return info;
}

function failureOf(fn: () => unknown): LedgerlineError | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof LedgerlineError) return err;
    throw err;
  }
  return undefined;
}

describe('ManagedLedgerInfo stored format', () => {
  it('reads back what it writes, through the wire bytes', () => {
    const info = sampleInfo();
    const bytes = toBinary(ManagedLedgerInfoSchema, infoToProto(info));
    expect(infoFromProto(fromBinary(ManagedLedgerInfoSchema, bytes))).toEqual(info);
    expect(storedLastOffset(info)).toBe(4);
  });

  it("keeps a closed ledger's largest event time (field 105), and reads a ledger stored before it without one", () => {
    const info = sampleInfo();
    Object.assign(info.ledgers[0]!, { minBrokerTimestampMs: 900, maxBrokerTimestampMs: 990, maxEventTimeMs: 120 });
    const bytes = toBinary(ManagedLedgerInfoSchema, infoToProto(info));
    const read = infoFromProto(fromBinary(ManagedLedgerInfoSchema, bytes));
    expect(read.ledgers[0]!.maxEventTimeMs).toBe(120);
    expect(read).toEqual(info);
    // A LedgerInfo as written before field 105: no event time, the broker timestamps stand in.
    const old = create(ManagedLedgerInfoSchema, {
      ledgerInfo: [
        create(LedgerInfoSchema, {
          ledgerId: 3n,
          entries: 2n,
          firstOffset: 0n,
          lastOffset: 4n,
          minBrokerTimestampMs: 900n,
          maxBrokerTimestampMs: 990n,
        }),
      ],
    });
    const summary = infoFromProto(fromBinary(ManagedLedgerInfoSchema, toBinary(ManagedLedgerInfoSchema, old)))
      .ledgers[0]!;
    expect(summary.maxBrokerTimestampMs).toBe(990);
    expect('maxEventTimeMs' in summary).toBe(false);
  });

  it('marks every ledger deletable, once, when the topic is deleted', () => {
    const deleting = markDeleting(sampleInfo(), [{ ledgerId: 1, cursorName: 'sub' }], 2_000);
    expect(deleting.state).toBe('deleting');
    expect(deleting.ledgers).toEqual([]);
    expect(deleting.deletableLedgers.map((d) => d.ledgerId)).toEqual([1, 3, 7]);
  });

  it('refuses a value that does not decode as DATA_LOSS', () => {
    const noLedgerId = create(ManagedLedgerInfoSchema, { ledgerInfo: [create(LedgerInfoSchema, { entries: 1n })] });
    const tooLarge = create(ManagedLedgerInfoSchema, {
      ledgerInfo: [create(LedgerInfoSchema, { ledgerId: 2n ** 60n })],
    });
    for (const proto of [noLedgerId, tooLarge]) {
      const err = failureOf(() => infoFromProto(proto));
      expect(err?.code).toBe('DATA_LOSS');
      expect(err?.reason).toBe(LedgerInfoReason.MANAGED_LEDGER_INFO_CORRUPT);
    }
  });

  it('reads the low watermark as 0 until one is stored, keeps it through the stored form, and refuses one that is not an offset', () => {
    const info = sampleInfo();
    expect(storedLowWatermark(info)).toBe(0);
    info.properties.set(LOW_WATERMARK_PROPERTY, '3');
    const stored = infoFromProto(
      fromBinary(ManagedLedgerInfoSchema, toBinary(ManagedLedgerInfoSchema, infoToProto(info))),
    );
    expect(storedLowWatermark(stored)).toBe(3);
    for (const bad of ['-1', '1.5', 'x']) {
      info.properties.set(LOW_WATERMARK_PROPERTY, bad);
      expect(() => storedLowWatermark(info)).toThrow(/not an offset/);
    }
  });

  it('refuses a stored index that is not an offset', () => {
    const info = emptyManagedLedgerInfo();
    info.properties.set('index', 'x');
    expect(() => storedLastOffset(info)).toThrow(/not an offset/);
  });
});
