import { randomUUID } from 'node:crypto';
import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AdminContext } from '../admin-context.js';
import {
  emptyBalancerMemory,
  ownerLoad,
  ownerSideKey,
  planGroup,
  shedMemoryMs,
  type OwnerTopics,
  type PlannedMove,
} from './balancer-plan.js';
import { resolveBalancerSettings, type BalancerConfig } from '../config.js';
import { isBadVersion } from '../records/cas-retry.js';
import { LEASES_DIR } from '../records/layout.js';
import { OwnerControls } from './owner-controls.js';
import { CREATE_CONCURRENCY } from '../limits.js';
import pMap from 'p-map';
import { listLiveOwners } from './owner-sessions.js';
import { runBoundedByTarget } from './move-schedule.js';
import { LeaseRecordSchema, type OwnerRecord } from '../records/records.js';
import { listNamespaces } from '../admin/namespaces.js';
import { forEachChildPage, readRecord, writeRecord } from '../records/store-records.js';
import { listTenants } from '../admin/tenants.js';

/** Where the balancer's leader lease and its last status live. */
export const BALANCER_LEADER_PATH = '/admin/balancer/leader';
export const BALANCER_STATUS_PATH = '/admin/balancer/status';
/** Moves the status remembers, newest last. */
export const MAX_REMEMBERED_MOVES = 50;

const LeaderRecordSchema = z.object({ holderId: z.string(), expiresAtMs: z.number() });

const MoveRecordSchema = z.object({
  topic: z.string(),
  fromInstanceId: z.string(),
  toInstanceId: z.string(),
  reason: z.string(),
  atMs: z.number(),
  outcome: z.string(),
  pausedMs: z.number(),
});
export type BalancerMoveRecord = z.infer<typeof MoveRecordSchema>;

export const BalancerStatusRecordSchema = z.object({
  leaderId: z.string(),
  lastRoundAtMs: z.number(),
  rounds: z.number(),
  movesTotal: z.number(),
  decisions: z.array(z.string()),
  owners: z.array(z.object({ group: z.string(), instanceId: z.string(), topics: z.number(), load: z.number() })),
  recentMoves: z.array(MoveRecordSchema),
});
export type BalancerStatusRecord = z.infer<typeof BalancerStatusRecordSchema>;

/** Java's URLEncoder form of a local name (the lease node's name) back to the name. */
function decodeLocalName(encoded: string): string {
  return decodeURIComponent(encoded.replace(/\+/g, ' '));
}

/**
 * The owners the balancer moves topics between: writer owners, and read-only
 * owners for their consumers (PIP-63), each role balanced on its own. Kafka
 * gateways register too but hold no lease.
 */
async function balancedOwners(context: AdminContext): Promise<OwnerRecord[]> {
  const owners = await listLiveOwners(context, '');
  return owners.filter((owner) => owner.role === 'writer' || owner.role === 'readonly');
}

/** The set of owners one plan balances: a group's writer owners, or its read-only owners, never the two mixed. */
function balanceGroup(owner: Pick<OwnerRecord, 'group' | 'role'>): string {
  return owner.role === 'readonly' ? `${owner.group} (read-only)` : owner.group;
}

/** Carries out one planned move; by default the source owner transfers the topic (OwnerControlService). */
export type TopicMover = (move: PlannedMove) => Promise<{ pausedMs: number }>;

/**
 * The balancer: one metadata instance at a time (the holder of a leader
 * lease in the metadata store, renewed every round and lapsing after three
 * intervals) looks at every owner group each interval (its writer owners and
 * its read-only owners apart, balanceGroup), plans moves
 * (balancer-plan.ts: joins follow placement; shedding past the threshold for
 * the window, with a per-topic cooldown) and has each source owner transfer
 * its topic (OwnerControlService.TransferTopic), at most
 * balancerMaxMovesPerRound shed moves and balancerMaxJoinMovesPerRound join
 * moves per round, balancerTransferConcurrency at a time and at most
 * balancerTransferConcurrencyPerOwner into one owner. An owner that joins
 * starts a round within balancerJoinCheckIntervalMs rather than at the next
 * interval. What it saw, decided and did is written to the store for
 * `ledgerline balancer status`.
 */
export class Balancer {
  readonly settings: BalancerConfig;
  readonly holderId = randomUUID();
  private readonly memory = emptyBalancerMemory();
  private readonly mover: TopicMover;
  private timer: NodeJS.Timeout | undefined;
  private joinTimer: NodeJS.Timeout | undefined;
  private running = false;
  /** The owner sessions the last round planned with: any other one that joined since starts a round early. */
  private plannedWith = new Set<string>();
  /** The sessions that joined since the last round, as the previous join check saw them. */
  private joinedAtLastCheck = '';
  /** When this balancer last took or renewed the leader lease, and the renewal under way (one at a time). */
  private ledAtMs = -Infinity;
  private leading: Promise<boolean> | undefined;
  private status: BalancerStatusRecord | undefined;
  logger: Pick<Logger, 'info' | 'warn'> | undefined;

  constructor(
    private readonly context: AdminContext,
    settings: Partial<BalancerConfig> = {},
    mover?: TopicMover,
    /** How the balancer reaches owners; shared with the service's other calls to them. */
    private readonly controls = new OwnerControls(),
  ) {
    this.settings = resolveBalancerSettings(settings);
    this.mover = mover ?? ((move) => this.transfer(move));
  }

  start(): void {
    if (!this.settings.balancerEnabled || this.timer !== undefined) return;
    this.timer = setInterval(() => this.round().catch(unexpectedRejection), this.settings.balancerIntervalMs);
    this.timer.unref();
    if (this.settings.balancerJoinCheckIntervalMs > 0) {
      this.joinTimer = setInterval(
        () => this.roundIfJoined().catch(unexpectedRejection),
        this.settings.balancerJoinCheckIntervalMs,
      );
      this.joinTimer.unref();
    }
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.joinTimer !== undefined) clearInterval(this.joinTimer);
    this.timer = undefined;
    this.joinTimer = undefined;
    this.controls.close();
  }

  /** One round: lead (or not), look, plan, move, record. */
  async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (!(await this.lead())) return;
      await this.balance();
    } catch (thrown) {
      this.logger?.warn({ err: LedgerlineError.from(thrown).message }, 'balancer round failed; trying next interval');
    } finally {
      this.running = false;
    }
  }

  /**
   * Starts a round now when owners registered since the last round
   * planned (a scale-out should not wait up to an interval); a cheap look at
   * the owner records, not at every lease. The round starts once two checks
   * in a row saw the same owners joined: owners started together (a
   * Deployment scaled out) register seconds apart, and one round for all of
   * them moves each topic once, where a round per owner would move some twice.
   */
  async roundIfJoined(): Promise<void> {
    if (this.running) return;
    try {
      // One read tells whether another balancer leads: only a leader (or a candidate) reads every owner.
      if (await this.ledByAnother()) return;
      const now = this.context.now();
      const owners = await balancedOwners(this.context);
      const joined = owners
        .filter(
          (owner) =>
            !this.plannedWith.has(owner.sessionId) &&
            owner.draining !== true &&
            owner.registeredAtMs > now - this.settings.balancerJoinWindowMs,
        )
        .map((owner) => owner.sessionId)
        .sort()
        .join(' ');
      const settled = joined !== '' && joined === this.joinedAtLastCheck;
      this.joinedAtLastCheck = joined;
      if (settled) await this.round();
    } catch (thrown) {
      this.logger?.warn({ err: LedgerlineError.from(thrown).message }, 'balancer join check failed');
    }
  }

  /**
   * The leader lease, renewed at most once an interval while a round's moves
   * run (it lasts three), and by one renewal at a time: moves run
   * concurrently, and two compare-and-sets of one holder would refuse each other.
   */
  private stillLeading(): Promise<boolean> {
    if (this.context.now() - this.ledAtMs < this.settings.balancerIntervalMs) return Promise.resolve(true);
    this.leading ??= this.lead().finally(() => {
      this.leading = undefined;
    });
    return this.leading;
  }

  /** Whether another live balancer holds the leader lease now. */
  private async ledByAnother(): Promise<boolean> {
    const current = await readRecord(this.context.store, BALANCER_LEADER_PATH, LeaderRecordSchema);
    return (
      current !== undefined &&
      current.record.holderId !== this.holderId &&
      current.record.expiresAtMs > this.context.now()
    );
  }

  /** Takes or renews the leader lease; false when another live balancer holds it. */
  private async lead(): Promise<boolean> {
    const now = this.context.now();
    const current = await readRecord(this.context.store, BALANCER_LEADER_PATH, LeaderRecordSchema);
    if (current !== undefined && current.record.holderId !== this.holderId && current.record.expiresAtMs > now)
      return false;
    const record = { holderId: this.holderId, expiresAtMs: now + 3 * this.settings.balancerIntervalMs };
    try {
      await writeRecord(this.context.store, BALANCER_LEADER_PATH, record, current?.version ?? 'absent');
      this.ledAtMs = now;
      return true;
    } catch (error) {
      if (isBadVersion(error)) return false;
      throw error;
    }
  }

  private async balance(): Promise<void> {
    const now = this.context.now();
    const groups = await this.ownersWithTopics();
    this.forgetThePast(now, groups);
    this.plannedWith = new Set([...groups.values()].flat().map((entry) => entry.owner.sessionId));
    const decisions: string[] = [];
    const planned: PlannedMove[] = [];
    for (const [group, entries] of groups) {
      const count = (kind: PlannedMove['kind']) => planned.filter((move) => move.kind === kind).length;
      const sheds = Math.max(0, this.settings.balancerMaxMovesPerRound - count('shed'));
      const joins = Math.max(0, this.settings.balancerMaxJoinMovesPerRound - count('join'));
      const plan = planGroup(group, entries, this.memory, now, this.settings, sheds, joins);
      decisions.push(`${group}: ${plan.decision}`);
      planned.push(...plan.moves);
    }
    // A round's moves may outlast the leader lease: it is renewed while they run, and a balancer that lost it stops.
    // Once the lease is found lost, the moves left are not started, nor is the lease asked for again per move.
    let lost = false;
    const bounds = {
      concurrency: this.settings.balancerTransferConcurrency,
      perTarget: this.settings.balancerTransferConcurrencyPerOwner,
    };
    const into = (move: PlannedMove) => ownerSideKey(balanceGroup(move.to), move.to.instanceId);
    const results = await runBoundedByTarget(planned, into, bounds, async (move) => {
      if (lost || !(await this.stillLeading())) {
        lost = true;
        return undefined;
      }
      return this.execute(move);
    });
    const done = results.filter((result): result is BalancerMoveRecord => result !== undefined);
    if (done.length < planned.length) {
      decisions.push(`leadership lost: ${planned.length - done.length} planned move(s) left to the new leader`);
    }
    await this.record(now, groups, decisions, done);
  }

  /** Every live owner by balanced group (balanceGroup), with the topics it holds a live lease on. */
  private async ownersWithTopics(): Promise<Map<string, OwnerTopics[]>> {
    const owners = await balancedOwners(this.context);
    const byKey = new Map<string, OwnerTopics & { acquiredAtMs: Map<string, number> }>();
    const groups = new Map<string, OwnerTopics[]>();
    for (const owner of owners) {
      const entry = { owner, topics: [] as string[], acquiredAtMs: new Map<string, number>() };
      byKey.set(`${owner.group}/${owner.instanceId}`, entry);
      const group = balanceGroup(owner);
      groups.set(group, [...(groups.get(group) ?? []), entry]);
    }
    const store = this.context.store;
    // Lease nodes sit under their namespace's path, which is no node itself: namespaces come from the admin records.
    for (const tenant of await listTenants(this.context)) {
      for (const namespace of await listNamespaces(this.context, tenant).catch(() => [])) {
        const full = namespace.includes('/') ? namespace : `${tenant}/${namespace}`;
        const dir = `${LEASES_DIR}/${full}`;
        // A page's leases are read CREATE_CONCURRENCY at a time, not one round trip after another.
        await forEachChildPage(store, dir, async (names) => {
          await pMap(
            names,
            async (name) => {
              const lease = await readRecord(store, `${dir}/${name}`, LeaseRecordSchema);
              if (lease === undefined || lease.record.sessionId === '') return;
              const entry = byKey.get(`${lease.record.group}/${lease.record.instanceId}`);
              if (entry?.owner.sessionId !== lease.record.sessionId) return;
              const topic = `persistent://${full}/${decodeLocalName(name)}`;
              entry.topics.push(topic);
              entry.acquiredAtMs.set(topic, lease.record.acquiredAtMs);
            },
            { concurrency: CREATE_CONCURRENCY },
          );
        });
      }
    }
    for (const entries of groups.values()) for (const entry of entries) entry.topics.sort();
    return groups;
  }

  /**
   * Keeps what the balancer remembers bounded by what is live: moves whose
   * cooldown has passed, and clients of owners that are no longer registered.
   */
  private forgetThePast(now: number, groups: Map<string, OwnerTopics[]>): void {
    for (const [topic, movedAt] of this.memory.movedAtMs) {
      if (now - movedAt >= this.settings.balancerTopicCooldownMs) this.memory.movedAtMs.delete(topic);
    }
    for (const [topic, shedAt] of this.memory.shedAtMs) {
      if (now - shedAt >= shedMemoryMs(this.settings)) this.memory.shedAtMs.delete(topic);
    }
    for (const group of this.memory.streaks.keys()) if (!groups.has(group)) this.memory.streaks.delete(group);
    const owners = new Set(
      [...groups].flatMap(([group, entries]) => entries.map((entry) => ownerSideKey(group, entry.owner.instanceId))),
    );
    for (const key of this.memory.sides.keys()) if (!owners.has(key)) this.memory.sides.delete(key);
    for (const key of this.memory.ownerMovedAtMs.keys()) if (!owners.has(key)) this.memory.ownerMovedAtMs.delete(key);
    this.controls.retain(new Set([...groups.values()].flat().map((entry) => entry.owner.advertisedAddress)));
  }

  private async execute(move: PlannedMove): Promise<BalancerMoveRecord> {
    const base = {
      topic: move.topic,
      fromInstanceId: move.from.instanceId,
      toInstanceId: move.to.instanceId,
      reason: move.reason,
      atMs: this.context.now(),
    };
    this.memory.movedAtMs.set(move.topic, base.atMs);
    if (move.kind === 'shed') this.memory.shedAtMs.set(move.topic, base.atMs);
    try {
      const moved = await this.mover(move);
      this.logger?.info({ ...base }, 'balancer moved a topic');
      return { ...base, outcome: 'moved', pausedMs: moved.pausedMs };
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      this.logger?.warn({ ...base, err: error.message }, 'balancer move failed');
      return { ...base, outcome: `failed: ${error.reason || error.code}`, pausedMs: 0 };
    } finally {
      // A failed transfer may have moved the topic all the same: either way both owners' reports are stale now.
      const endedAtMs = this.context.now();
      for (const owner of [move.from, move.to])
        this.memory.ownerMovedAtMs.set(ownerSideKey(balanceGroup(owner), owner.instanceId), endedAtMs);
    }
  }

  private async transfer(move: PlannedMove): Promise<{ pausedMs: number }> {
    const moved = await this.controls
      .to(move.from.advertisedAddress)
      .transferTopic({ topic: move.topic, targetInstanceId: move.to.instanceId }, { deadlineMs: 60_000 });
    return { pausedMs: Number(moved.pausedMs) };
  }

  private async record(
    now: number,
    groups: Map<string, OwnerTopics[]>,
    decisions: string[],
    moves: BalancerMoveRecord[],
  ): Promise<void> {
    const previous = this.status;
    const status: BalancerStatusRecord = {
      leaderId: this.holderId,
      lastRoundAtMs: now,
      rounds: (previous?.rounds ?? 0) + 1,
      movesTotal: (previous?.movesTotal ?? 0) + moves.filter((move) => move.outcome === 'moved').length,
      decisions,
      owners: [...groups.values()].flat().map((entry) => ({
        group: balanceGroup(entry.owner),
        instanceId: entry.owner.instanceId,
        topics: entry.topics.length,
        load: ownerLoad(entry, this.settings),
      })),
      recentMoves: [...(previous?.recentMoves ?? []), ...moves].slice(-MAX_REMEMBERED_MOVES),
    };
    this.status = status;
    await writeRecord(this.context.store, BALANCER_STATUS_PATH, status);
  }
}

/** The last status the active balancer wrote, or undefined before its first round. */
export async function readBalancerStatus(context: AdminContext): Promise<BalancerStatusRecord | undefined> {
  return (await readRecord(context.store, BALANCER_STATUS_PATH, BalancerStatusRecordSchema))?.record;
}
