import { unexpectedRejection } from '@ledgerline/errors';
import type { MetadataStore } from '@ledgerline/metadata-store';

/** What the gate does to the server it guards (service-kit's RunningGrpcServer has both). */
export interface GuardedServer {
  setServing(serving: boolean): void;
  closeConnections(graceMs: number): void;
  readonly draining: AbortSignal;
}

export interface StoreHealthSettings {
  /** How often the store is tried, in ms; each try is bounded by the same time. */
  storeCheckIntervalMs: number;
  /** Failed tries in a row before the instance stops serving. */
  storeCheckFailures: number;
}

/** A node read to try the store: never written; '/' is answered without a round trip, so it would not do. */
export const STORE_PROBE_PATH = '/admin/store-probe';

/** How long a client's calls in flight get to finish after GOAWAY. */
const CLOSE_GRACE_MS = 1_000;

/**
 * Takes a metadata instance that cannot reach its store out of service: its
 * health turns NOT_SERVING (readiness takes it out of its Service) and, at
 * every failed try while it lasts, its open connections get GOAWAY, so owners
 * and clients reconnect to a replica that can serve. Without it, an owner
 * whose one connection landed here keeps renewing its session on an
 * instance that cannot, and loses it while the other replica is healthy.
 * Serving again from the first good try.
 */
export class StoreHealthGate {
  private failures = 0;
  private shed = false;
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly store: Pick<MetadataStore, 'get'>,
    private readonly server: GuardedServer,
    private readonly settings: StoreHealthSettings,
    private readonly logger: {
      warn(details: object, message: string): void;
      info(details: object, message: string): void;
    },
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => this.check().catch(unexpectedRejection), this.settings.storeCheckIntervalMs);
    this.timer.unref();
    this.server.draining.addEventListener('abort', () => this.stop(), { once: true });
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get serving(): boolean {
    return !this.shed;
  }

  /** One try (exported for tests that drive it without a timer). */
  async check(): Promise<void> {
    if (this.checking || this.server.draining.aborted) return;
    this.checking = true;
    try {
      const ok = await this.tryStore();
      if (this.server.draining.aborted) return;
      if (ok) this.recovered();
      else this.failed();
    } finally {
      this.checking = false;
    }
  }

  private async tryStore(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.settings.storeCheckIntervalMs);
    });
    try {
      return await Promise.race([
        this.store.get(STORE_PROBE_PATH).then(
          () => true,
          () => false,
        ),
        timeout,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private failed(): void {
    this.failures++;
    if (this.failures < this.settings.storeCheckFailures) return;
    if (!this.shed) {
      this.shed = true;
      this.server.setServing(false);
      this.logger.warn(
        { failures: this.failures },
        'the metadata store cannot be reached: not serving, sending clients to the other replicas',
      );
    }
    this.server.closeConnections(CLOSE_GRACE_MS);
  }

  private recovered(): void {
    this.failures = 0;
    if (!this.shed) return;
    this.shed = false;
    this.server.setServing(true);
    this.logger.info({}, 'the metadata store answers again: serving');
  }
}
