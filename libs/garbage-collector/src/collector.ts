import { randomUUID } from 'node:crypto';
import type { Bus, BusSubscription } from '@ledgerline/bus';
import { decodeLedgersDeletable, LEDGERS_DELETABLE_SUBJECT } from '@ledgerline/bus';
import { LedgerlineError } from '@ledgerline/errors';
import type { LedgerStore } from '@ledgerline/ledger-store';
import { MANAGED_LEDGERS_ROOT } from '@ledgerline/naming';
import { PENDING_DELETION_SHARDS, pendingDeletionEntryPath, pendingDeletionShard } from '@ledgerline/ledger-info';
import { Registry } from 'prom-client';
import {
  addCounts,
  emptyCounts,
  type CollectorContext,
  type CollectorLogger,
  type PassCounts,
} from './collector-context.js';
import { CountingMetadata, type CollectorMetadata } from './collector-metadata.js';
import { resolveCollectorConfig, type CollectorConfig, type CollectorConfigInput } from './config.js';
import { CollectorReason } from './errors.js';
import { forEachBounded } from './bounded-pool.js';
import { fullScan } from './full-scan.js';
import { IndexWalker } from './index-entries.js';
import { Membership } from './membership.js';
import { collectorMetrics } from './metrics.js';
import { OrphanSweep } from './orphan-sweep.js';
import { PendingTable, type PendingDeletion } from './pending-table.js';

/** When the last full scan ran (wall-clock ms, decimal), shared by every instance. */
export const LAST_FULL_SCAN_PATH = '/gc/last-full-scan';
/** Hinted managed ledgers waiting for collection; hints beyond it are dropped (the next pass finds them). */
const MAX_HINTED = 10_000;

export interface GarbageCollectorOptions {
  metadata: CollectorMetadata;
  ledgerStore: LedgerStore;
  /** "Ledgers deletable" hints wake the collector early; without a bus it relies on its passes. */
  bus?: Bus;
  config?: CollectorConfigInput;
  registry?: Registry;
  logger?: CollectorLogger;
  /** Unique per running instance (default a random UUID). */
  instanceId?: string;
  now?: () => number;
  random?: () => number;
}

export interface PassOptions {
  sweepOrphans?: boolean;
  fullScan?: boolean;
}

export interface PassReport extends PassCounts {
  durationMs: number;
  metadataReads: number;
  fullScan: boolean;
}

export interface CollectorStatus extends PassCounts {
  instanceId: string;
  passes: number;
  lastPassAtMs: number;
  pendingDeletions: number;
  ownedShards: number[];
  members: number;
  oldestPendingAgeMs: number;
  lastFullScanAtMs: number;
  /** When this instance last swept orphans; 0 before its first sweep. */
  lastOrphanSweepAtMs: number;
}

const SILENT: CollectorLogger = { info() {}, warn() {}, error() {} };

/**
 * The garbage collector (PIP-129 phase 2). A pass, every gcIntervalMs:
 * renew membership, work through the index shards this instance owns
 * (collecting each managed ledger they name), then, on the instance owning
 * shard 0, the orphan sweep and the full scan when due. "Ledgers deletable"
 * hints collect the hinted managed ledger after hintDelayMs. Work runs one
 * piece at a time per instance; instances split shards (membership.ts).
 */
export class GarbageCollector {
  readonly config: CollectorConfig;
  readonly instanceId: string;
  private readonly ctx: CollectorContext;
  private readonly counting: CountingMetadata;
  private readonly membership: Membership;
  private readonly walker: IndexWalker;
  private readonly sweeper: OrphanSweep;
  private readonly totals = emptyCounts();
  private passes = 0;
  private lastPassAtMs = 0;
  private lastSweepAtMs: number;
  /** lastSweepAtMs starts at construction to delay the first sweep; this one only records sweeps. */
  private lastOrphanSweepAtMs = 0;
  private lastFullScanAtMs = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private passTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private hintTimer: NodeJS.Timeout | undefined;
  private readonly hinted = new Set<string>();
  private subscription: BusSubscription | undefined;
  private stopped = false;

  constructor(private readonly options: GarbageCollectorOptions) {
    this.config = resolveCollectorConfig(options.config);
    this.instanceId = options.instanceId ?? randomUUID();
    this.counting = new CountingMetadata(options.metadata);
    const now = options.now ?? Date.now;
    this.ctx = {
      metadata: this.counting,
      ledgerStore: options.ledgerStore,
      config: this.config,
      table: new PendingTable(),
      metrics: collectorMetrics(options.registry ?? new Registry()),
      logger: options.logger ?? SILENT,
      now,
      random: options.random ?? Math.random,
    };
    this.lastSweepAtMs = now();
    this.membership = new Membership(this.counting, this.instanceId, this.config.memberTtlMs);
    this.walker = new IndexWalker(this.ctx);
    this.sweeper = new OrphanSweep(this.ctx);
  }

  /** Joins the collectors and starts the timers and the hint subscription. */
  async start(): Promise<void> {
    await this.membership.heartbeat();
    // heartbeat() logs its own failures; the next tick tries again.
    this.heartbeatTimer = setInterval(
      () => void this.heartbeat().catch(() => undefined),
      Math.max(1, Math.floor(this.config.memberTtlMs / 3)),
    );
    this.heartbeatTimer.unref();
    if (this.options.bus !== undefined) this.listen(this.options.bus);
    this.schedulePass(0);
  }

  /** Stops the timers, waits for the work in flight and leaves, so the shards move at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.passTimer);
    clearTimeout(this.hintTimer);
    clearInterval(this.heartbeatTimer);
    this.subscription?.unsubscribe();
    await this.chain.catch(() => undefined);
    await this.membership.leave().catch(() => undefined);
  }

  /** Runs a pass now (after the one in flight). */
  triggerPass(options: PassOptions = {}): Promise<PassReport> {
    if (this.stopped) {
      return Promise.reject(
        new LedgerlineError('UNAVAILABLE', CollectorReason.COLLECTOR_STOPPED, 'the collector is stopping'),
      );
    }
    return this.exclusive(() => this.pass(options));
  }

  status(): CollectorStatus {
    const oldest = this.ctx.table.oldestMarkedAtMs();
    return {
      ...this.totals,
      instanceId: this.instanceId,
      passes: this.passes,
      lastPassAtMs: this.lastPassAtMs,
      pendingDeletions: this.ctx.table.size,
      ownedShards: this.membership.ownedShards(PENDING_DELETION_SHARDS),
      members: this.membership.members.length,
      oldestPendingAgeMs: oldest === undefined ? 0 : Math.max(0, this.ctx.now() - oldest),
      lastFullScanAtMs: this.lastFullScanAtMs,
      lastOrphanSweepAtMs: this.lastOrphanSweepAtMs,
      ownerTagMismatches: this.ctx.table.refusedCount(),
    };
  }

  /** Pending deletions this instance works on, ascending by ledger id after `afterLedgerId`. */
  listPending(afterLedgerId: number, limit: number): PendingDeletion[] {
    return this.ctx.table.page(afterLedgerId, limit).map((p) => ({ ...p }));
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private schedulePass(delayMs: number): void {
    if (this.stopped) return;
    this.passTimer = setTimeout(() => {
      void this.exclusive(() => this.pass({}))
        .catch((error: unknown) => this.ctx.logger.warn({ error: String(error) }, 'garbage-collector pass failed'))
        .finally(() => this.schedulePass(this.config.gcIntervalMs));
    }, delayMs);
    this.passTimer.unref();
  }

  private async heartbeat(): Promise<void> {
    try {
      await this.membership.heartbeat();
    } catch (error) {
      this.ctx.logger.warn({ error: String(error) }, 'renewing garbage-collector membership failed');
    }
  }

  private async pass(options: PassOptions): Promise<PassReport> {
    const started = performance.now();
    const readsBefore = this.counting.reads;
    const counts = emptyCounts();
    try {
      await this.membership.refresh();
    } catch (error) {
      this.ctx.logger.warn({ error: String(error) }, 'reading garbage-collector members failed; keeping the last ones');
    }
    const shards = this.membership.ownedShards(PENDING_DELETION_SHARDS);
    this.ctx.table.retainPaths((path) => shards.includes(pendingDeletionShard(path)));
    await this.walker.walkShards(shards, counts);
    const leader = shards.includes(0);
    const ranFullScan = await this.maybeFullScan(options.fullScan === true, leader);
    if (
      options.sweepOrphans === true ||
      (leader && this.ctx.now() - this.lastSweepAtMs >= this.config.orphanSweepIntervalMs)
    ) {
      this.lastSweepAtMs = this.ctx.now();
      this.lastOrphanSweepAtMs = this.lastSweepAtMs;
      await this.sweeper.sweep(counts);
    }
    addCounts(this.totals, counts);
    this.passes++;
    this.lastPassAtMs = this.ctx.now();
    const durationMs = performance.now() - started;
    this.updateGauges(shards.length);
    this.ctx.metrics.passes.inc();
    this.ctx.metrics.passDuration.observe(durationMs / 1000);
    return { ...counts, durationMs, metadataReads: this.counting.reads - readsBefore, fullScan: ranFullScan };
  }

  private async maybeFullScan(forced: boolean, leader: boolean): Promise<boolean> {
    if (!forced && !leader) return false;
    const stored = await this.counting.get(LAST_FULL_SCAN_PATH);
    const last = stored === undefined ? 0 : Number(new TextDecoder().decode(stored.value)) || 0;
    this.lastFullScanAtMs = last;
    const sinceMs = this.ctx.now() - last;
    if (forced && sinceMs < this.config.fullScanMinGapMs) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        CollectorReason.FULL_SCAN_RATE_LIMITED,
        `a full scan ran ${Math.round(sinceMs / 1000)} s ago; the next may run ${Math.ceil((this.config.fullScanMinGapMs - sinceMs) / 1000)} s from now`,
      );
    }
    if (!forced && sinceMs < this.config.fullScanIntervalMs) return false;
    const nowMs = this.ctx.now();
    // Recorded first: instances that crash mid-scan do not start another at once.
    await this.counting.put(LAST_FULL_SCAN_PATH, new TextEncoder().encode(String(nowMs)));
    this.lastFullScanAtMs = nowMs;
    const result = await fullScan(this.ctx);
    this.ctx.logger.info({ ...result }, 'full scan of every managed ledger done');
    return true;
  }

  private updateGauges(ownedShards: number): void {
    const { metrics, table } = this.ctx;
    metrics.pendingDeletions.set(table.size);
    metrics.ownedShards.set(ownedShards);
    const oldest = table.oldestMarkedAtMs();
    metrics.oldestPendingAge.set(oldest === undefined ? 0 : Math.max(0, this.ctx.now() - oldest) / 1000);
  }

  /** Hints are best effort: a missed or dropped one only waits for the next pass. */
  private listen(bus: Bus): void {
    const subscription = bus.subscribe(LEDGERS_DELETABLE_SUBJECT);
    this.subscription = subscription;
    void (async () => {
      for await (const message of subscription) {
        try {
          const { name } = decodeLedgersDeletable(message.data);
          this.hint(`${MANAGED_LEDGERS_ROOT}/${name}`);
        } catch (error) {
          this.ctx.logger.warn({ error: String(error) }, 'ignoring a ledgers-deletable hint that does not decode');
        }
      }
    })().catch((error: unknown) =>
      this.ctx.logger.warn({ error: String(error) }, 'the hint subscription ended; passes carry on without hints'),
    );
  }

  private hint(path: string): void {
    if (this.stopped || this.hinted.size >= MAX_HINTED) return;
    if (!this.membership.ownedShards(PENDING_DELETION_SHARDS).includes(pendingDeletionShard(path))) return;
    this.hinted.add(path);
    if (this.hintTimer !== undefined) return;
    this.hintTimer = setTimeout(() => {
      this.hintTimer = undefined;
      void this.exclusive(() => this.collectHinted()).catch((error: unknown) =>
        this.ctx.logger.warn({ error: String(error) }, 'collecting hinted managed ledgers failed'),
      );
    }, this.config.hintDelayMs);
    this.hintTimer.unref();
  }

  private async collectHinted(): Promise<void> {
    const paths = [...this.hinted];
    this.hinted.clear();
    const counts = emptyCounts();
    await forEachBounded(paths, this.config.managedLedgerConcurrency, (path) =>
      this.walker.collectEntry(pendingDeletionEntryPath(path), counts),
    );
    addCounts(this.totals, counts);
    this.updateGauges(this.membership.ownedShards(PENDING_DELETION_SHARDS).length);
  }
}
