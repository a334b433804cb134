import { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { startRedis, uniqueNamespace, type ServerProcess } from '@ledgerline/testing';
import { taggedEntry } from './testing/conformance-support.js';
import { RedisLedgerStore } from './redis-store.js';

/*
 * An append's entries go to the Redis socket as they are: no copy into one
 * packed argument, none into one command buffer. Checked at the socket: the
 * chunks Node hands the kernel for the connection are the entries' own
 * memory. And the script is found again after Redis forgets it.
 */

let redis: ServerProcess;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
});
afterAll(async () => {
  await admin.quit();
  await redis.stop();
});

/** The chunks net.Socket writes to `port` while `run` runs. */
async function chunksWrittenTo(port: number, run: () => Promise<unknown>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  const prototype = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  const { _write: write, _writev: writev } = prototype;
  const writeSpy = jest.spyOn(prototype, '_write').mockImplementation(function (this: Socket, ...args: unknown[]) {
    if (this.remotePort === port && args[0] instanceof Uint8Array) chunks.push(args[0]);
    return write.apply(this, args);
  });
  const writevSpy = jest.spyOn(prototype, '_writev').mockImplementation(function (this: Socket, ...args: unknown[]) {
    if (this.remotePort === port) {
      for (const { chunk } of args[0] as { chunk: unknown }[]) if (chunk instanceof Uint8Array) chunks.push(chunk);
    }
    return writev.apply(this, args);
  });
  try {
    await run();
  } finally {
    writeSpy.mockRestore();
    writevSpy.mockRestore();
  }
  return chunks;
}

function sameMemory(chunk: Uint8Array, entry: Uint8Array): boolean {
  return chunk.buffer === entry.buffer && chunk.byteOffset === entry.byteOffset && chunk.length === entry.length;
}

async function openStore(): Promise<RedisLedgerStore> {
  return new RedisLedgerStore({ url: redis.url, keyPrefix: `${uniqueNamespace('append-command')}:` });
}

it.each([
  ['packed (small entries)', 100],
  ['one argument per entry (large entries)', 20_000],
])('writes the entries of an append %s to the socket without copying them', async (_, size) => {
  const store = await openStore();
  try {
    const writer = await store.create(1);
    await writer.append([taggedEntry(1, 0)]);
    const entries = [1, 2, 3].map((entryId) => taggedEntry(1, entryId, size));
    const port = Number(new URL(redis.url).port);
    const chunks = await chunksWrittenTo(port, () => writer.append(entries));
    for (const entry of entries) expect(chunks.some((chunk) => sameMemory(chunk, entry))).toBe(true);
    const read = await store.read(1, 1, 3);
    expect(read.map(({ data }) => Buffer.from(data))).toEqual(entries.map((entry) => Buffer.from(entry)));
  } finally {
    await store.close();
  }
});

it('sends the script again when Redis has forgotten it, and the append lands once', async () => {
  const store = await openStore();
  try {
    const writer = await store.create(1);
    await writer.append([taggedEntry(1, 0), taggedEntry(1, 1)]);
    await admin.script('FLUSH');
    expect(await writer.append([taggedEntry(1, 2), taggedEntry(1, 3)])).toBe(2);
    expect(await writer.append([taggedEntry(1, 4)])).toBe(4);
    const read = await store.read(1, 0, 4);
    expect(read.map(({ data }) => Buffer.from(data))).toEqual(
      [0, 1, 2, 3, 4].map((id) => Buffer.from(taggedEntry(1, id))),
    );
  } finally {
    await store.close();
  }
});
