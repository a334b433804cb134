import { encodeMessageEntry } from '@ledgerline/message-format';
import type { ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import { encodeEntries, entryDelivery } from './consume-response.js';
import { consumeResponseOf } from './testing/consume-responses.js';
import { writerEntry, type WriterEntry } from './writer-entry.js';

function stored(payload: Uint8Array, numMessages: number): ManagedLedgerEntry {
  return {
    position: { ledgerId: 3, entryId: 7 },
    payload,
    firstOffset: 10,
    lastOffset: 10 + numMessages - 1,
    numMessages,
    brokerTimestampMs: 1,
  };
}

/** The messages a consumer gets of `entry`, decoded from the response written by hand. */
function sentMessages(entry: WriterEntry) {
  const response = consumeResponseOf(
    encodeEntries([entryDelivery({ entry, redeliveryCount: 0, batchIndexes: undefined })]),
  );
  return response.event.case === 'entry' ? response.event.value.messages : [];
}

describe('writerEntry', () => {
  it("dispatches a batch by the entry's ordering key, not by its first message's key", () => {
    const payload = encodeMessageEntry({
      producerName: 'p',
      sequenceId: 1n,
      publishTimeMs: 1,
      key: 'order-42',
      messages: [
        { payload: new Uint8Array([1]), key: 'line-1' },
        { payload: new Uint8Array([2]), key: 'line-2' },
      ],
    });
    const entry = writerEntry(stored(payload, 2));
    expect(entry.key).toBe('order-42');
    expect(sentMessages(entry).map((m) => [m.key, m.offset, m.batchIndex])).toEqual([
      ['line-1', 10n, 0],
      ['line-2', 11n, 1],
    ]);
  });

  it('gives an entry without a key no key, whatever its messages carry', () => {
    const payload = encodeMessageEntry({
      producerName: 'p',
      sequenceId: 1n,
      publishTimeMs: 1,
      messages: [{ payload: new Uint8Array([1]), key: 'only-the-message' }],
    });
    expect(writerEntry(stored(payload, 1)).key).toBeUndefined();
  });
});
