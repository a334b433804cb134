import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import {
  decodeLacAdvanced,
  decodeLedgersDeletable,
  decodeManagedLedgerNotification,
  decodeMetadataChange,
  encodeLacAdvanced,
  encodeLedgersDeletable,
  encodeManagedLedgerNotification,
  encodeMetadataChange,
  MAX_DELETABLE_LEDGERS_PER_NOTIFICATION,
  NOTIFICATION_MAGIC,
} from './notification-codec.js';

describe('notification payloads', () => {
  it('round-trip every kind', () => {
    const change = { path: '/a/b', kind: 'modified' as const, version: 7 };
    expect(decodeMetadataChange(encodeMetadataChange(change))).toEqual(change);
    expect(decodeLacAdvanced(encodeLacAdvanced({ ledgerId: 12, lac: -1 }))).toEqual({ ledgerId: 12, lac: -1 });
    expect(decodeLacAdvanced(encodeLacAdvanced({ ledgerId: 12, lac: 4, offset: 99 }))).toEqual({
      ledgerId: 12,
      lac: 4,
      offset: 99,
    });
    const confirmed = { ledgerId: 12, lac: 5, offset: 100, confirmedAtMs: 1_796_131_056_436 };
    expect(decodeLacAdvanced(encodeLacAdvanced(confirmed))).toEqual(confirmed);
    const rolled = { name: 't/ns/persistent/x', kind: 'rolled' as const, version: 3, ledgerId: 99 };
    expect(decodeManagedLedgerNotification(encodeManagedLedgerNotification(rolled))).toEqual(rolled);
    const info = { name: 't/ns/persistent/x', kind: 'info-changed' as const, version: 4 };
    expect(decodeManagedLedgerNotification(encodeManagedLedgerNotification(info))).toEqual(info);
    const deletable = { name: 't/ns/persistent/x', ledgerIds: [1, 2, 3] };
    expect(decodeLedgersDeletable(encodeLedgersDeletable(deletable))).toEqual(deletable);
  });

  it('start with the magic byte and format version', () => {
    const bytes = encodeLacAdvanced({ ledgerId: 1, lac: 0 });
    expect([bytes[0], bytes[1]]).toEqual([NOTIFICATION_MAGIC, 1]);
  });

  it('refuse to encode more ledger ids than one notification carries', () => {
    const ledgerIds = Array.from({ length: MAX_DELETABLE_LEDGERS_PER_NOTIFICATION + 1 }, (_, i) => i);
    expect(() => encodeLedgersDeletable({ name: 'x', ledgerIds })).toThrow(
      expect.objectContaining({ reason: 'TOO_MANY_LEDGERS' }),
    );
  });

  it('reject malformed payloads with BAD_NOTIFICATION and never anything else', () => {
    const decoders = [decodeMetadataChange, decodeLacAdvanced, decodeManagedLedgerNotification, decodeLedgersDeletable];
    const header = Uint8Array.of(NOTIFICATION_MAGIC, 1);
    const withHeader = fc.string().map((s) => Uint8Array.from([...header, ...Buffer.from(s, 'utf8')]));
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 64 }), withHeader),
        fc.constantFrom(...decoders),
        (bytes, decode) => {
          try {
            decode(bytes);
          } catch (error) {
            expect(error).toBeInstanceOf(LedgerlineError);
            expect((error as LedgerlineError).reason).toBe('BAD_NOTIFICATION');
          }
        },
      ),
      { numRuns: 300 },
    );
    const json = (o: unknown) => Uint8Array.from([...header, ...Buffer.from(JSON.stringify(o), 'utf8')]);
    expect(() => decodeMetadataChange(json({ path: '/a', kind: 'renamed', version: 1 }))).toThrow(LedgerlineError);
    expect(() => decodeLacAdvanced(json({ ledgerId: 1.5, lac: 0 }))).toThrow(LedgerlineError);
    expect(() => decodeLedgersDeletable(json({ name: 'x', ledgerIds: [1, 'two'] }))).toThrow(LedgerlineError);
    expect(() => decodeMetadataChange(Uint8Array.of(NOTIFICATION_MAGIC, 2, 123, 125))).toThrow(/format version 2/);
  });
});
