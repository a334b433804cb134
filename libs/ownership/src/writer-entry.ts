import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import type { MessageSchema } from '@ledgerline/proto';
import type { Delivery, DispatchEntry } from '@ledgerline/subscriptions';
import type { ConsumeResponse } from './consume-stream.js';
import { entryContents, positionMessage } from './proto-mapping.js';

/**
 * An entry of a writer topic's ledgers as subscriptions dispatch it, on the
 * writer owner and on read-only owners alike: decoded once, for every consumer.
 */
export interface WriterEntry extends DispatchEntry {
  readonly stored: ManagedLedgerEntry;
  readonly messages: MessageInitShape<typeof MessageSchema>[];
}

export function writerEntry(stored: ManagedLedgerEntry): WriterEntry {
  // The entry's own ordering key, not its first message's: a batch's messages may carry keys of their own.
  const { key, messages } = entryContents(stored);
  return {
    position: stored.position,
    numMessages: stored.numMessages,
    sizeBytes: stored.payload.length,
    key,
    stored,
    messages,
  };
}

/** The Entry message for a delivery: the messages of the entry the consumer still has to get. */
export function entryResponse(delivery: Delivery<WriterEntry>): ConsumeResponse {
  const { entry, batchIndexes } = delivery;
  const wanted = batchIndexes === undefined ? undefined : new Set(batchIndexes);
  const messages = wanted === undefined ? entry.messages : entry.messages.filter((m) => wanted.has(m.batchIndex ?? -1));
  const stored = entry.stored;
  return {
    event: {
      case: 'entry',
      value: {
        position: positionMessage(stored.position),
        firstOffset: BigInt(stored.firstOffset),
        lastOffset: BigInt(stored.lastOffset),
        brokerTimestampMs: BigInt(stored.brokerTimestampMs),
        numMessages: stored.numMessages,
        redeliveryCount: delivery.redeliveryCount,
        messages,
      },
    },
  };
}
