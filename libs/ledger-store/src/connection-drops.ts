import { Redis } from 'ioredis';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { uniqueNamespace } from '@ledgerline/testing';
import { checkFencingHistory, readAll, runFencingWorkload, type FencingHistory } from './fencing-history.js';
import type { RedisLedgerStore } from './redis-store.js';
import { DEFAULT_MAX_READ_ENTRIES } from './store.js';

/*
 * Dropped connections as a network blip would drop them (test code only):
 * `CLIENT KILL TYPE normal` on every node of a private Redis or Redis
 * Cluster, which closes every client connection but the admin's own and loses
 * no data on the server.
 */

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

export class ConnectionDropper {
  private readonly admins: Redis[];
  /** Second connections, busy with a script while the first ones kill. */
  private readonly blockers: Redis[];
  private drops = 0;
  private readonly waiters: { atLeast: number; resolve: () => void }[] = [];

  constructor(nodeUrls: readonly string[]) {
    const options = { maxRetriesPerRequest: 3, autoResendUnfulfilledCommands: false, disconnectTimeout: 100 };
    this.admins = nodeUrls.map((url) => new Redis(url, options));
    this.blockers = nodeUrls.map((url) => new Redis(url, options));
    for (const client of [...this.admins, ...this.blockers]) client.on('error', () => undefined);
  }

  /**
   * Drops every client connection `times` times, `intervalMs` apart, in three
   * ways by turns: a plain drop, which lands wherever it lands; a drop while
   * writes are held (CLIENT PAUSE), so calls are surely in flight and not run;
   * and a drop queued behind a busy script, so the calls that arrived before it
   * run and their replies are lost with the connection.
   */
  async run(times: number, intervalMs: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      await pause(intervalMs);
      await Promise.all(this.admins.map((admin, node) => this.dropOnce(admin, this.blockers[node]!, i % 3)));
      this.drops++;
      for (const waiter of this.waiters.filter((w) => w.atLeast <= this.drops)) waiter.resolve();
    }
  }

  private async dropOnce(admin: Redis, blocker: Redis, mode: number): Promise<void> {
    if (mode === 1) {
      await admin.call('CLIENT', 'PAUSE', 1_000, 'WRITE');
      await pause(5);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await admin.call('CLIENT', 'UNPAUSE');
      return;
    }
    if (mode === 2) {
      // The blocker's own connection goes too, so its reply may never come: the wait for it is bounded.
      const busy = blocker.eval(BUSY_SCRIPT, 0, 20_000).catch(() => undefined);
      await pause(5);
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
      await Promise.race([busy, pause(200)]);
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

/** Retries a call while it fails UNAVAILABLE (a connection is being re-opened), a bounded number of times. */
export async function retryWhileUnavailable<T>(call: () => Promise<T>, attempts = 100): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (thrown) {
      if (attempt >= attempts || !LedgerlineError.is(thrown, ErrorReason.STORE_UNAVAILABLE)) throw thrown;
      await pause(20);
    }
  }
}

export interface DropScenarioResult {
  histories: FencingHistory[];
  problems: string[];
  /** Calls that failed UNAVAILABLE yet whose entries were stored: drops that cost a reply, not the write. */
  ambiguousStored: number;
}

/**
 * Runs the fencing workload `rounds` times on fresh ledgers while the
 * dropper closes every connection, and checks each history against the model.
 */
export async function fencingUnderConnectionDrops(
  open: (keyPrefix: string) => RedisLedgerStore,
  nodeUrls: readonly string[],
  rounds: number,
): Promise<DropScenarioResult> {
  const histories: FencingHistory[] = [];
  const problems: string[] = [];
  let ambiguousStored = 0;
  for (let round = 0; round < rounds; round++) {
    const keyPrefix = `${uniqueNamespace('drops')}:`;
    const writerStore = open(keyPrefix);
    const fencer = open(keyPrefix);
    const dropper = new ConnectionDropper(nodeUrls);
    try {
      const ledgerId = 1_000 + round;
      const writer = await retryWhileUnavailable(() => writerStore.create(ledgerId));
      const drops = dropper.run(12, 40);
      const history = await runFencingWorkload({
        writer,
        fencer,
        ledgerId,
        chains: 6,
        maxCallsPerChain: 5_000,
        fenceWhen: () => dropper.after(8),
      });
      await drops;
      const finalLac = await retryWhileUnavailable(() => fencer.lastAddConfirmed(ledgerId));
      const stored = await retryWhileUnavailable(() => readAll(fencer, ledgerId, finalLac, DEFAULT_MAX_READ_ENTRIES));
      histories.push(history);
      const checked = checkFencingHistory(history, finalLac, stored);
      problems.push(...checked.problems.map((p) => `round ${round}: ${p}`));
      ambiguousStored += checked.ambiguousStored;
    } finally {
      dropper.close();
      await writerStore.close();
      await fencer.close();
    }
  }
  return { histories, problems, ambiguousStored };
}

/** The scenario's verdict: the model held, and the drops really did hit appends on both sides of the fence. */
export function expectFencingModelHeld(result: DropScenarioResult): void {
  expect(result.problems).toEqual([]);
  const records = result.histories.flatMap((h) => h.records);
  expect(records.some((r) => !r.outcome.ok && r.outcome.code === 'UNAVAILABLE')).toBe(true);
  expect(records.some((r) => r.issuedAfterFence)).toBe(true);
  expect(records.filter((r) => r.outcome.ok).length).toBeGreaterThan(10);
}
