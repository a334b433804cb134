import { publishMessageOf, type OutgoingMessage } from './batch-builder.js';

function outgoing(eventTimeMs: bigint): OutgoingMessage {
  return {
    payload: new Uint8Array([1]),
    key: undefined,
    properties: {},
    eventTimeMs,
    sizeBytes: 33,
    resolve: () => undefined,
    reject: () => undefined,
  };
}

describe('publishMessageOf: the largest event time of an entry', () => {
  it('goes with an entry whose messages all have an event time, a single message or a batch', () => {
    expect(publishMessageOf('t', 'p', 0n, [outgoing(1_000n)]).maxEventTimeMs).toBe(1_000n);
    const batch = publishMessageOf('t', 'p', 0n, [outgoing(3_000n), outgoing(1_000n), outgoing(2_000n)]);
    expect(batch.maxEventTimeMs).toBe(3_000n);
  });

  it('is left out when a message has none, since the owner answers that one its publish time', () => {
    expect('maxEventTimeMs' in publishMessageOf('t', 'p', 0n, [outgoing(0n)])).toBe(false);
    expect('maxEventTimeMs' in publishMessageOf('t', 'p', 0n, [outgoing(5_000n), outgoing(0n)])).toBe(false);
  });
});
