import { create, fromBinary, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { ConsumeResponseSchema, EntrySchema, type ConsumeResponse } from '@ledgerline/proto';
import { EncodedMessage } from '@ledgerline/rpc';
import { WireEntry } from '../consume-response.js';
import type { ConsumeOutput } from '../consume-stream.js';

/**
 * A delivery of a spec's own session, for a Consume stream over entries that
 * are no WriterEntry: its Entry message encoded by reflection, which the
 * stream sizes and coalesces as it does the deliveries owners write by hand.
 */
class ReflectedEntry extends WireEntry {
  readonly bodyBytes: number;

  constructor(private readonly body: Uint8Array) {
    super();
    this.bodyBytes = body.length;
  }

  writeBody(out: Uint8Array, at: number): number {
    out.set(this.body, at);
    return at + this.body.length;
  }
}

export function reflectedEntry(entry: MessageInitShape<typeof EntrySchema>): WireEntry {
  return new ReflectedEntry(toBinary(EntrySchema, create(EntrySchema, entry)));
}

/** What a Consume stream yields (entries encoded, other events as objects), as the response a client decodes. */
export function consumeResponseOf(output: ConsumeOutput): ConsumeResponse {
  return output instanceof EncodedMessage
    ? fromBinary(ConsumeResponseSchema, output.bytes)
    : create(ConsumeResponseSchema, output);
}
