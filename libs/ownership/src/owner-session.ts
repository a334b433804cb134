import { LedgerlineError, unexpectedRejection } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { OwnerRole } from '@ledgerline/proto';
import type { MetadataClients } from './metadata-clients.js';
import { loadMessage } from './load-mapping.js';
import type { LoadMeter } from './owner-load.js';
import type { OwnerIdentity } from './owner-identity.js';
import { OwnerReason } from './reasons.js';
import { SessionWatch } from './session-watch.js';

export interface OwnerSessionOptions {
  clients: MetadataClients;
  identity: OwnerIdentity;
  ttlMs: number;
  /** The role registered: WRITER (default) or READONLY (PIP-63's read-only owners). */
  role?: OwnerRole;
  /** Called when the session is gone (expired, or unreachable past its TTL): every lease went with it. */
  onLost: (error: LedgerlineError) => void;
  logger: { warn(details: object, message: string): void };
  now?: () => number;
  /** Sampled on every keep-alive, which carries the load to the metadata service. */
  load?: LoadMeter;
}

/** Keep-alives per TTL: three chances before the session can lapse. */
const KEEP_ALIVES_PER_TTL = 3;

/**
 * This instance's owner registration (role WRITER, or READONLY) and the session its leases
 * live in. A keep-alive runs every third of the TTL; when the session expired,
 * or no keep-alive succeeded for a whole TTL (metadata unreachable), the
 * session counts as lost at once (its leases may already belong to someone
 * else), `onLost` runs, and a fresh session is registered on the next tick.
 */
export class OwnerSession {
  private id: string | undefined;
  private lastConfirmedMs = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private stopped = false;
  private readonly now: () => number;
  private readonly watch: SessionWatch;

  constructor(private readonly options: OwnerSessionOptions) {
    this.now = options.now ?? Date.now;
    this.watch = new SessionWatch({ clients: options.clients, logger: options.logger });
  }

  /** True while the metadata service may end this session early once this process is gone (docs/failover.md). */
  get earlyExpiryArmed(): boolean {
    return this.watch.earlyExpiryArmed;
  }

  /** The live session id; UNAVAILABLE while none is registered. */
  get sessionId(): string {
    if (this.id === undefined || !this.isLive()) {
      throw new LedgerlineError(
        'UNAVAILABLE',
        OwnerReason.OWNER_SESSION_LOST,
        'this owner has no live session: retry shortly',
      );
    }
    return this.id;
  }

  /** True while a keep-alive succeeded within the TTL. */
  isLive(): boolean {
    return this.id !== undefined && this.now() - this.lastConfirmedMs < this.options.ttlMs;
  }

  private get keepAliveIntervalMs(): number {
    return Math.max(100, Math.floor(this.options.ttlMs / KEEP_ALIVES_PER_TTL));
  }

  async start(): Promise<void> {
    // The metadata service may be starting too (pods coming up together): wait for it within the TTL.
    await this.register(true);
    this.timer = setInterval(() => this.tick().catch(unexpectedRejection), this.keepAliveIntervalMs);
    this.timer.unref();
  }

  private async register(waitForReady = false): Promise<void> {
    const { identity, clients, ttlMs } = this.options;
    const started = this.now();
    const answer = await clients.lookup.registerOwner(
      {
        owner: {
          instanceId: identity.instanceId,
          role: this.options.role ?? OwnerRole.WRITER,
          group: identity.group,
          advertisedAddress: identity.advertisedAddress,
        },
        sessionTtlMs: BigInt(ttlMs),
      },
      { deadlineMs: ttlMs, waitForReady },
    );
    this.id = answer.sessionId;
    this.lastConfirmedMs = started;
    this.watch.watch(answer.sessionId);
    // The first sample only starts the interval the first keep-alive reports.
    await this.options.load?.sample();
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      if (this.id === undefined) {
        await this.register();
        return;
      }
      const started = this.now();
      const load = this.options.load === undefined ? undefined : loadMessage(await this.options.load.sample());
      // Bounded by half the TTL, not all of it: one keep-alive that gets no answer (a metadata replica that
      // lost its store) must leave time for the next, on a fresh connection, before the session lapses.
      await this.options.clients.lookup.keepAliveOwner(
        { sessionId: this.id, ...(load === undefined ? {} : { load }) },
        { deadlineMs: Math.max(100, Math.floor(this.options.ttlMs / 2)) },
      );
      this.lastConfirmedMs = started;
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      if (error.reason === MetadataServiceReason.SESSION_EXPIRED || (this.id !== undefined && !this.isLive()))
        this.lose(error);
      else this.options.logger.warn({ err: error.message }, 'owner keep-alive failed; retrying');
    } finally {
      this.ticking = false;
    }
  }

  private lose(error: LedgerlineError): void {
    if (this.id === undefined) return;
    this.id = undefined;
    this.watch.stop();
    this.options.logger.warn({ reason: error.reason }, 'owner session lost: unloading every topic');
    this.options.onLost(error);
  }

  /** Stops keep-alives and ends the session (its leases lapse at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.watch.stop();
    const id = this.id;
    this.id = undefined;
    if (id !== undefined) {
      await this.options.clients.lookup
        .unregisterOwner({ sessionId: id }, { deadlineMs: 2_000 })
        .catch(() => undefined);
    }
  }
}
