import { Redis } from 'ioredis';
import { nonLinearizablePaths, runCasWorkload, type CasCall } from './cas-history.js';
import type { MetadataStore } from './store.js';

/*
 * Dropped connections, as a network blip would drop them (test code only):
 * `CLIENT KILL TYPE normal` on every node of a private Redis or Redis
 * Cluster, which closes every client connection but the admin's own and loses
 * no data on the server.
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

export class ConnectionDropper {
  private readonly admins: Redis[];
  private readonly blockers: Redis[];

  constructor(nodeUrls: readonly string[]) {
    const options = { maxRetriesPerRequest: 3, autoResendUnfulfilledCommands: false, disconnectTimeout: 100 };
    this.admins = nodeUrls.map((url) => new Redis(url, options));
    this.blockers = nodeUrls.map((url) => new Redis(url, options));
    for (const client of [...this.admins, ...this.blockers]) client.on('error', () => undefined);
  }

  /**
   * Drops every client connection `times` times, `intervalMs` apart. Every
   * other drop is queued behind a busy script, so the calls that reached the
   * server before it run and their replies are lost with the connection.
   */
  async run(times: number, intervalMs: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      await pause(intervalMs);
      await Promise.all(
        this.admins.map(async (admin, node) => {
          if (i % 2 === 0) {
            await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
            return;
          }
          // The blocker's own connection goes too, so its reply may never come: the wait for it is bounded.
          const busy = this.blockers[node]!.eval(BUSY_SCRIPT, 0, 20_000).catch(() => undefined);
          await pause(5);
          await admin.call('CLIENT', 'KILL', 'TYPE', 'normal');
          await Promise.race([busy, pause(200)]);
        }),
      );
    }
  }

  close(): void {
    for (const client of [...this.admins, ...this.blockers]) client.disconnect();
  }
}

/**
 * Random concurrent compare-and-set histories from several clients while
 * every connection is dropped again and again; returns the calls and the
 * paths whose history is not linearizable.
 */
export async function casUnderConnectionDrops(
  clients: MetadataStore[],
  nodeUrls: readonly string[],
  root: string,
  rounds: number,
): Promise<{ calls: CasCall[]; failures: string[] }> {
  const calls: CasCall[] = [];
  const failures: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const dropper = new ConnectionDropper(nodeUrls);
    try {
      const seed = 7_000 + round;
      const drops = dropper.run(6, 15);
      const paths = ['a', 'b'].map((name) => `${root}/drops-${round}/${name}`);
      const [shared, ...solo] = await Promise.all([
        // Paced calls, so the shared histories span the drops.
        runCasWorkload({ clients, paths, callsPerClient: 20, seed, between: () => pause(2) }),
        // Each client also works a path of its own as fast as it can: there any conflict is with itself.
        ...clients.map((client, i) =>
          runCasWorkload({
            clients: [client],
            paths: [`${root}/drops-${round}/solo-${i}`],
            callsPerClient: 150,
            seed: seed + i,
          }),
        ),
      ]);
      await drops;
      const history = [...shared!, ...solo.flat()];
      calls.push(...history);
      failures.push(...nonLinearizablePaths(history).map((failure) => `seed ${seed}: ${failure}`));
    } finally {
      dropper.close();
    }
  }
  return { calls, failures };
}
