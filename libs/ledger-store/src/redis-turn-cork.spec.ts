import { Socket } from 'node:net';
import { startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { taggedEntry } from './testing/conformance-support.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * The appends every ledger of a store makes in one turn of the event loop
 * leave in one socket write; each is still answered alone (the conformance
 * suite's "one turn" case). Counted at the socket: the writes Node hands the
 * kernel for the connection to this Redis.
 */

let redis: ServerProcess;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});

/** Calls of net.Socket's write paths for sockets connected to `port`, while `run` runs. */
async function socketWritesTo(port: number, run: () => Promise<unknown>): Promise<number> {
  let writes = 0;
  const count = function (this: Socket) {
    if (this.remotePort === port) writes++;
  };
  const prototype = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  const spies = (['_write', '_writev'] as const).map((method) => {
    const original = prototype[method];
    return jest.spyOn(prototype, method).mockImplementation(function (this: Socket, ...args: unknown[]) {
      count.call(this);
      return original.apply(this, args);
    });
  });
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return writes;
}

it('sends the appends of sixteen ledgers made in one turn in one socket write', async () => {
  const store = new RedisLedgerStore({ url: redis.url, keyPrefix: `${uniqueNamespace('turn')}:` });
  try {
    const writers = await Promise.all(Array.from({ length: 16 }, (_, i) => store.create(i + 1)));
    // The first append per connection loads the script (EVAL); the counted turn then sends EVALSHA only.
    await Promise.all(writers.map((writer) => writer.append([taggedEntry(0, 0)])));
    const port = Number(new URL(redis.url).port);
    const writes = await socketWritesTo(port, () =>
      Promise.all(writers.map((writer, call) => writer.append([taggedEntry(call, 1), taggedEntry(call, 2)]))),
    );
    expect(writes).toBe(1);
    for (const writer of writers) expect(await store.lastAddConfirmed(writer.ledgerId)).toBe(2);
  } finally {
    await store.close();
  }
});
