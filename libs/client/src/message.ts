import type { Entry, Message as WireMessage } from '@ledgerline/proto';

/** Where a message is stored: its entry (ledger, entry), its index in the entry's batch and its partition. */
export interface MessageId {
  /** The ledger holding the entry; -1n for a resend the owner recognised as a duplicate of an entry it no longer knows. */
  readonly ledgerId: bigint;
  /** The entry in that ledger; -1n as for ledgerId. */
  readonly entryId: bigint;
  /** The message's index in its entry's batch; -1 for an entry that is not a batch. */
  readonly batchIndex: number;
  /** The partition of a partitioned topic; -1 for a non-partitioned topic. */
  readonly partition: number;
}

/** What `producer.send` resolves with once the owner has stored the message. */
export interface SendReceipt {
  /** Where the message is stored. */
  readonly messageId: MessageId;
  /** The message's continuous offset in its topic (or partition); -1n when messageId is -1. */
  readonly offset: bigint;
  /** True when the owner had already stored this message (a resend after a lost receipt). */
  readonly duplicate: boolean;
}

/** A message as a consumer or reader receives it. */
export interface Message {
  /** The topic (or partition) it was read from, by the name the client uses. */
  readonly topic: string;
  /** The message's bytes. */
  readonly payload: Uint8Array;
  /** The key it was sent with, if any. */
  readonly key: string | undefined;
  /** The properties it was sent with. */
  readonly properties: Readonly<Record<string, string>>;
  /** Where it is stored. */
  readonly messageId: MessageId;
  /** Its continuous offset in its topic (or partition). */
  readonly offset: bigint;
  /** When the owner stored it, in milliseconds since the epoch. */
  readonly publishTime: number;
  /** The producer's event time in milliseconds since the epoch; 0 when not set. */
  readonly eventTime: number;
  /** The name of the producer that sent it. */
  readonly producerName: string;
  /** How many times it was delivered before (0 on first delivery; readers always see 0). */
  readonly redeliveryCount: number;
}

/** A stable text form of a message id, `ledger:entry:batchIndex:partition`. */
export function messageIdToString(id: MessageId): string {
  return `${id.ledgerId}:${id.entryId}:${id.batchIndex}:${id.partition}`;
}

/** The key under which an entry's position is remembered. */
export function positionKey(ledgerId: bigint, entryId: bigint): string {
  return `${ledgerId}:${entryId}`;
}

/** Orders positions: negative when a is before b. */
export function comparePositions(
  a: { ledgerId: bigint; entryId: bigint },
  b: { ledgerId: bigint; entryId: bigint },
): number {
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  if (a.entryId !== b.entryId) return a.entryId < b.entryId ? -1 : 1;
  return 0;
}

/** The messages of one delivered entry, as the client hands them out. */
export function messagesOfEntry(entry: Entry, topic: string, partition: number): Message[] {
  const ledgerId = entry.position?.ledgerId ?? -1n;
  const entryId = entry.position?.entryId ?? -1n;
  return entry.messages.map((wire: WireMessage, index) => ({
    topic,
    payload: wire.payload,
    key: wire.key,
    properties: wire.properties,
    messageId: {
      ledgerId,
      entryId,
      batchIndex: entry.numMessages > 1 ? (wire.batchIndex >= 0 ? wire.batchIndex : index) : -1,
      partition,
    },
    offset: wire.offset,
    publishTime: Number(wire.publishTimeMs !== 0n ? wire.publishTimeMs : entry.brokerTimestampMs),
    eventTime: Number(wire.eventTimeMs),
    producerName: wire.producerName,
    redeliveryCount: entry.redeliveryCount,
  }));
}
