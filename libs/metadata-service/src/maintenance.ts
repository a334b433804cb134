import type { NamespaceName } from '@ledgerline/naming';
import type { Logger } from 'pino';
import type { AdminContext } from './admin-context.js';
import { listNamespaces, parseNamespace } from './admin/namespaces.js';
import { sweepExpiredOwners } from './coordination/owner-sessions.js';
import { listTenants } from './admin/tenants.js';
import { reconcileTopicCount } from './admin/topic-recount.js';

export interface MaintenanceOptions {
  /** How often every namespace's topic counter is recounted (a full scan of its buckets). */
  reconcileIntervalMs: number;
  /** How long a counter must be still before a recount may rewrite it. */
  recountSettleMs: number;
  /** How often expired owner sessions are swept away. */
  ownerSweepIntervalMs: number;
  logger?: Logger;
}

/** Namespaces whose counter is suspected of drifting, waiting for a recount; beyond this, suspicions are dropped. */
const MAX_SUSPECTS = 10_000;

/**
 * A suspected namespace is recounted at most this often: a full namespace
 * refuses every create, and each refusal must not cost a scan of its buckets.
 */
const MIN_RECOUNT_INTERVAL_MS = 5 * 60_000;

/**
 * The metadata service's background work, all of it safe to run on several
 * instances at once (every write compares versions):
 *   - recount namespaces whose counter may have drifted (a create refused by
 *     the limit, a create that failed midway), once the counter has settled;
 *   - recount every namespace every reconcileIntervalMs, for crashes nobody saw;
 *   - sweep expired owner sessions every ownerSweepIntervalMs.
 */
export class MetadataMaintenance {
  readonly #context: AdminContext;
  readonly #options: MaintenanceOptions;
  #logger: Logger | undefined;
  readonly #suspects = new Map<string, NamespaceName>();
  readonly #lastRecountMs = new Map<string, number>();
  readonly #timers: NodeJS.Timeout[] = [];
  #running: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(context: AdminContext, options: MaintenanceOptions) {
    this.#context = context;
    this.#options = options;
    this.#logger = options.logger;
  }

  /** Marks a namespace for a recount soon (after its counter settles). */
  suspect = (namespace: NamespaceName): void => {
    const key = namespace.toString();
    const last = this.#lastRecountMs.get(key);
    if (last !== undefined && Date.now() - last < MIN_RECOUNT_INTERVAL_MS) return;
    if (this.#suspects.size < MAX_SUSPECTS) this.#suspects.set(key, namespace);
  };

  /** Starts the timers; `logger` (when given) receives what the tasks find and how they fail. */
  start(logger?: Logger): void {
    this.#logger = logger ?? this.#logger;
    const every = (ms: number, task: () => Promise<void>) => {
      const timer = setInterval(() => this.#serially(task), ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(Math.max(1000, Math.min(this.#options.recountSettleMs, 10_000)), () => this.recountSuspects());
    every(this.#options.reconcileIntervalMs, () => this.recountAll());
    every(this.#options.ownerSweepIntervalMs, async () => {
      await sweepExpiredOwners(this.#context);
    });
  }

  /** Stops the timers and waits for the task in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearInterval(timer);
    await this.#running;
  }

  #serially(task: () => Promise<void>): void {
    this.#running = this.#running.then(async () => {
      if (this.#stopped) return;
      try {
        await task();
      } catch (error) {
        this.#logger?.warn({ err: error }, 'metadata maintenance task failed; it runs again later');
      }
    });
  }

  async recountSuspects(): Promise<void> {
    for (const [key, namespace] of [...this.#suspects]) {
      if (this.#stopped) return;
      const result = await reconcileTopicCount(this.#context, namespace, this.#options.recountSettleMs).catch(
        () => undefined,
      );
      if (result?.skipped === 'busy') continue;
      this.#suspects.delete(key);
      if (this.#lastRecountMs.size >= MAX_SUSPECTS) this.#lastRecountMs.clear();
      this.#lastRecountMs.set(key, Date.now());
      if (result?.corrected) this.#logger?.warn(result, 'topic counter was off; corrected');
    }
  }

  async recountAll(): Promise<void> {
    for (const tenant of await listTenants(this.#context)) {
      for (const name of await listNamespaces(this.#context, tenant).catch(() => [])) {
        if (this.#stopped) return;
        const result = await reconcileTopicCount(
          this.#context,
          parseNamespace(name),
          this.#options.recountSettleMs,
        ).catch(() => undefined);
        if (result?.corrected) this.#logger?.warn(result, 'topic counter was off; corrected');
      }
    }
  }
}
