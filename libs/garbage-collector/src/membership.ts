import { createHash } from 'node:crypto';
import { isBadVersionError } from './errors.js';
import type { CollectorMetadata } from './collector-metadata.js';

/** Where collector instances announce themselves: `/gc/members/<instanceId>`. */
export const MEMBERS_DIR = '/gc/members';

/** Members listed per page while counting them. */
const MEMBERS_PAGE = 1_000;

interface Observation {
  version: number;
  /** Local time (this process's monotonic clock) the version was first seen. */
  seenAtMs: number;
}

/**
 * Collector instances and the index shards each works on. Every instance
 * rewrites its member node every memberTtlMs / 3; another instance counts it
 * live while it sees the node's version change within memberTtlMs of its own
 * clock (so clocks never need to agree). Shards go to live members by
 * rendezvous hashing, so a member joining or dying moves only its share, and
 * the share of one that died moves within a TTL. Two instances briefly
 * working on one shard is safe (every change is a compare-and-set and a
 * ledger's deletion is counted by the one whose compare-and-set removed its
 * marker); a shard briefly worked on by none is only delayed.
 */
export class Membership {
  private readonly seen = new Map<string, Observation>();
  private live: string[];

  constructor(
    private readonly metadata: CollectorMetadata,
    readonly instanceId: string,
    private readonly ttlMs: number,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.live = [instanceId];
  }

  /** Renews this instance's node. */
  async heartbeat(): Promise<void> {
    const value = new TextEncoder().encode(JSON.stringify({ instanceId: this.instanceId }));
    await this.metadata.put(`${MEMBERS_DIR}/${this.instanceId}`, value);
  }

  /** Re-reads the members, forgets the ones dead for long, and returns the live ones (this one included). */
  async refresh(): Promise<string[]> {
    const now = this.clock();
    const names = await this.listMembers();
    const live = new Set([this.instanceId]);
    for (const name of names) {
      if (name === this.instanceId) continue;
      const node = await this.metadata.get(`${MEMBERS_DIR}/${name}`);
      if (node === undefined) continue;
      const previous = this.seen.get(name);
      if (previous === undefined || previous.version !== node.version) {
        this.seen.set(name, { version: node.version, seenAtMs: now });
        live.add(name);
        continue;
      }
      if (now - previous.seenAtMs < this.ttlMs) live.add(name);
      // A member silent for several TTLs is gone: its node goes too, unless it renewed meanwhile.
      else if (now - previous.seenAtMs > 3 * this.ttlMs) await this.forget(name, node.version);
    }
    for (const name of this.seen.keys()) if (!names.includes(name)) this.seen.delete(name);
    this.live = [...live].sort();
    return this.live;
  }

  get members(): readonly string[] {
    return this.live;
  }

  /** The shards among `shards` this instance works on with the members last seen. */
  ownedShards(shards: number): number[] {
    const owned: number[] = [];
    for (let shard = 0; shard < shards; shard++) {
      if (rendezvousOwner(shard, this.live) === this.instanceId) owned.push(shard);
    }
    return owned;
  }

  /** Removes this instance's node (clean shutdown: its shards move at once). */
  async leave(): Promise<void> {
    await this.metadata.delete(`${MEMBERS_DIR}/${this.instanceId}`);
  }

  private async forget(name: string, version: number): Promise<void> {
    try {
      await this.metadata.delete(`${MEMBERS_DIR}/${name}`, version);
    } catch (error) {
      if (!isBadVersionError(error)) throw error;
    }
    this.seen.delete(name);
  }

  private async listMembers(): Promise<string[]> {
    const names: string[] = [];
    let after: string | undefined;
    do {
      const page = await this.metadata.children(MEMBERS_DIR, after, MEMBERS_PAGE);
      names.push(...page.names);
      after = page.next;
    } while (after !== undefined);
    return names;
  }
}

/** The member with the highest hash of (shard, member): highest random weight. */
export function rendezvousOwner(shard: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const member of members) {
    const weight = createHash('sha256').update(`${shard}/${member}`).digest().readBigUInt64BE(0);
    if (weight > bestWeight) {
      best = member;
      bestWeight = weight;
    }
  }
  return best;
}
