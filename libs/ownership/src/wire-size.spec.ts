import { create, toBinary } from '@bufbuild/protobuf';
import { EntrySchema, MessageSchema } from '@ledgerline/proto';
import { entryWireBytes, messageWireBytes, withinWireBytes } from './wire-size.js';

/** A small deterministic generator, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function text(next: () => number, max: number): string {
  return Array.from({ length: Math.floor(next() * max) }, () =>
    String.fromCodePoint(32 + Math.floor(next() * 2000)),
  ).join('');
}

function message(next: () => number) {
  const properties: Record<string, string> = {};
  for (let i = Math.floor(next() * 4); i > 0; i--) properties[text(next, 12)] = text(next, 40);
  return {
    payload: new Uint8Array(Math.floor(next() * 300)),
    ...(next() < 0.5 ? { key: text(next, 30) } : {}),
    properties,
    eventTimeMs: BigInt(Math.floor(next() * 2 ** 52)),
    publishTimeMs: BigInt(Date.now()),
    producerName: text(next, 20),
    sequenceId: BigInt(Math.floor(next() * 2 ** 53)),
    offset: BigInt(Math.floor(next() * 2 ** 53)),
    batchIndex: next() < 0.3 ? -1 : Math.floor(next() * 1000),
  };
}

describe('wire size bounds', () => {
  it('never underestimates a message or an entry, whatever its fields', () => {
    const next = random(7);
    for (let round = 0; round < 500; round++) {
      const messages = Array.from({ length: 1 + Math.floor(next() * 20) }, () => message(next));
      for (const m of messages)
        expect(toBinary(MessageSchema, create(MessageSchema, m)).length).toBeLessThanOrEqual(messageWireBytes(m));
      const entry = {
        position: { ledgerId: BigInt(2 ** 40), entryId: BigInt(2 ** 40) },
        firstOffset: BigInt(2 ** 53),
        lastOffset: BigInt(2 ** 53),
        brokerTimestampMs: BigInt(Date.now()),
        numMessages: messages.length,
        redeliveryCount: 3,
        messages,
      };
      expect(toBinary(EntrySchema, create(EntrySchema, entry)).length).toBeLessThanOrEqual(entryWireBytes(entry));
    }
  });

  it('keeps the leading entries that fit, and always the first', () => {
    const entry = (payloadBytes: number) => ({ messages: [{ payload: new Uint8Array(payloadBytes) }] });
    const entries = [entry(1_000), entry(1_000), entry(1_000)];
    const one = entryWireBytes(entries[0]!);
    const same = (e: (typeof entries)[number]) => e;
    expect(withinWireBytes(entries, same, 2 * one)).toHaveLength(2);
    expect(withinWireBytes(entries, same, 3 * one)).toHaveLength(3);
    expect(withinWireBytes(entries, same, 10)).toHaveLength(1);
    expect(withinWireBytes([], same, 10)).toHaveLength(0);
    // Past the bound, nothing more is converted.
    const converted: number[] = [];
    withinWireBytes([1, 2, 3, 4], (n) => (converted.push(n), entry(1_000)), 2 * one);
    expect(converted).toEqual([1, 2, 3]);
  });
});
