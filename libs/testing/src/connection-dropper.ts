import { Redis } from 'ioredis';

/*
 * Dropped connections as a network blip would drop them: `CLIENT KILL TYPE
 * normal` on every node of a private Redis or Redis Cluster, which closes
 * every client connection but the admin's own and loses no data on the
 * server. Both stores' robustness tests drop connections this way.
 */

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A script that keeps the server busy for ARGV[1] microseconds (bounded by an iteration count). */
const BUSY_SCRIPT = `
local start = redis.call('TIME')
local startUs = start[1] * 1000000 + start[2]
for i = 1, 10000000 do
  local now = redis.call('TIME')
  if now[1] * 1000000 + now[2] - startUs >= tonumber(ARGV[1]) then return i end
end
return -1
`;

/** How long the busy script holds the server, in microseconds. */
const BUSY_SCRIPT_US = 20_000;
/** How long writes are held before a paused drop, in milliseconds (the server lifts the pause itself after 1 s). */
const WRITE_PAUSE_MS = 1_000;
/** The bound on waiting for the busy script's reply, which may be lost with its own connection, in milliseconds. */
const BUSY_REPLY_WAIT_MS = 200;

/**
 * How one drop lands:
 * - `plain`: wherever it lands;
 * - `paused`: while writes are held (CLIENT PAUSE), so calls are surely in flight and not run;
 * - `busy`: queued behind a busy script, so the calls that reached the server
 *   before it run and their replies are lost with the connection.
 */
export type DropKind = 'plain' | 'paused' | 'busy';

export class ConnectionDropper {
  private readonly admins: Redis[];
  /** Second connections, busy with a script while the first ones kill. */
  private readonly blockers: Redis[];
  private drops = 0;
  private readonly waiters: { atLeast: number; resolve: () => void }[] = [];

  /** Drops connections on every node of `nodeUrls`, taking the `kinds` by turns. */
  constructor(
    nodeUrls: readonly string[],
    private readonly kinds: readonly DropKind[] = ['plain', 'paused', 'busy'],
  ) {
    const options = { maxRetriesPerRequest: 3, autoResendUnfulfilledCommands: false, disconnectTimeout: 100 };
    this.admins = nodeUrls.map((url) => new Redis(url, options));
    this.blockers = nodeUrls.map((url) => new Redis(url, options));
    // The admins' own connections survive the kills; errors on the blockers are the point of the test.
    for (const client of [...this.admins, ...this.blockers]) client.on('error', () => undefined);
  }

  /** Drops every client connection `times` times, `intervalMs` apart. */
  async run(times: number, intervalMs: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      await pause(intervalMs);
      const kind = this.kinds[i % this.kinds.length]!;
      await Promise.all(this.admins.map((admin, node) => this.dropOnce(admin, this.blockers[node]!, kind)));
      this.drops++;
      for (const waiter of this.waiters.filter((w) => w.atLeast <= this.drops)) waiter.resolve();
    }
  }

  private async dropOnce(admin: Redis, blocker: Redis, kind: DropKind): Promise<void> {
    if (kind === 'paused') {
      await admin.call('CLIENT', 'PAUSE', WRITE_PAUSE_MS, 'WRITE');
      await pause(5);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await admin.call('CLIENT', 'UNPAUSE');
      return;
    }
    if (kind === 'busy') {
      // The blocker's own connection goes too, so its reply may never come: the wait for it is bounded.
      const busy = blocker.eval(BUSY_SCRIPT, 0, BUSY_SCRIPT_US).catch(() => undefined);
      await pause(5);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await Promise.race([busy, pause(BUSY_REPLY_WAIT_MS)]);
      return;
    }
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
  }

  /** Resolves once `count` drops have happened. */
  after(count: number): Promise<void> {
    if (this.drops >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ atLeast: count, resolve }));
  }

  close(): void {
    for (const client of [...this.admins, ...this.blockers]) client.disconnect();
  }
}
