import { LedgerlineError } from '@ledgerline/errors';
import type { AdminContext } from '../admin-context.js';
import { probeAddress, type AddressProbe, type ProbeVerdict } from './address-probe.js';
import { isBadVersion } from '../records/cas-retry.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { ownerPath } from '../records/layout.js';
import { isLive, requireLiveOwner } from './owner-sessions.js';
import { OwnerRecordSchema, type OwnerRecord } from '../records/records.js';
import { readRecord, writeRecord } from '../records/store-records.js';

/** The most WatchOwnerSession streams one metadata instance holds (one per owner, with room for restarts). */
export const MAX_WATCHED_SESSIONS = 10_000;

/**
 * Refused connections it takes to call an owner's process gone, accepted ones to call it alive, and the most
 * attempts made after a drop. One acceptance is not enough: a process being killed closes its connection to
 * this service before its listening socket, and a busy machine can hold it between the two, so an attempt
 * right after the drop can still be accepted by a process that is going.
 */
const REFUSALS_NEEDED = 2;
const ACCEPTANCES_NEEDED = 2;
const MAX_DROP_PROBES = 5;
/** Judging rounds after a drop: a keep-alive the process sent just before it died can land during the first. */
const MAX_DROP_ROUNDS = 3;

export interface SessionLivenessSettings {
  /** How long a connection attempt to an owner may take before it says nothing (`unknown`). */
  probeTimeoutMs: number;
  /** The wait between the two refused attempts that end a session early. */
  confirmDelayMs: number;
  /** Attempts to reach a newly watched owner (it may still be binding its port), this far apart. */
  armAttempts: number;
  armIntervalMs: number;
}

export const DEFAULT_SESSION_LIVENESS: SessionLivenessSettings = {
  probeTimeoutMs: 1_000,
  confirmDelayMs: 100,
  armAttempts: 20,
  armIntervalMs: 500,
};

type Logger = { info(details: object, message: string): void; warn(details: object, message: string): void };

const quiet: Logger = { info: () => undefined, warn: () => undefined };

/**
 * Ends the session of an owner whose process is known to be gone before its
 * TTL runs out (docs/failover.md). An owner holds a WatchOwnerSession stream
 * open; when the stream drops without this service ending it, the owner's
 * advertised address is tried, `confirmDelayMs` apart. Only when two
 * attempts are refused (and none accepted), the address accepted a connection earlier in this
 * session (so a refusal there means something), and no keep-alive moved the
 * owner record during the round (one compare-and-set on the version read
 * before it; up to MAX_DROP_ROUNDS rounds), is the session expired now: its leases are free for the next
 * acquisition. A stopped, slow or unreachable owner keeps its full TTL, and the
 * ledger fencing of the next owner stays the guard against two writers.
 */
export class SessionLiveness {
  logger: Logger = quiet;
  private readonly settings: SessionLivenessSettings;
  private readonly watching = new Map<string, number>();
  private watchers = 0;
  private closed = false;
  private readonly checks = new Set<Promise<void>>();

  constructor(
    private readonly context: AdminContext,
    settings: Partial<SessionLivenessSettings> = {},
    private readonly probe: AddressProbe = probeAddress,
  ) {
    this.settings = { ...DEFAULT_SESSION_LIVENESS, ...settings };
  }

  /**
   * The WatchOwnerSession stream: says when early expiry is armed, then holds
   * until the call ends, or ends it (OK) when this service drains: the owner
   * is alive then and opens its watch again, with another instance if need be.
   */
  async *watch(
    sessionId: string,
    signal: AbortSignal,
    draining?: AbortSignal,
  ): AsyncIterable<{ earlyExpiryArmed: boolean }> {
    const owner = await requireLiveOwner(this.context, sessionId);
    if (this.watchers >= MAX_WATCHED_SESSIONS) {
      throw new LedgerlineError(
        'RESOURCE_EXHAUSTED',
        MetadataServiceReason.TOO_MANY_SESSION_WATCHES,
        `this metadata instance already watches ${MAX_WATCHED_SESSIONS} owner sessions; the session still lives by its TTL`,
      );
    }
    this.watchers++;
    this.watching.set(sessionId, (this.watching.get(sessionId) ?? 0) + 1);
    let armed = false;
    const dropped = (): void => {
      if (armed && !this.closed) this.track(this.expireIfGone(owner));
    };
    signal.addEventListener('abort', dropped, { once: true });
    try {
      yield { earlyExpiryArmed: false };
      armed = await this.arm(owner, signal);
      if (armed) yield { earlyExpiryArmed: true };
      await untilAborted(draining === undefined ? signal : AbortSignal.any([signal, draining]));
    } finally {
      this.watchers--;
      const left = (this.watching.get(sessionId) ?? 1) - 1;
      if (left === 0) this.watching.delete(sessionId);
      else this.watching.set(sessionId, left);
    }
  }

  /** Stops judging drops (the service is shutting down: its own streams end) and waits for checks under way. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.checks]);
  }

  /** True once the owner's address accepted a connection: only then does a refusal there mean its process is gone. */
  private async arm(owner: OwnerRecord, signal: AbortSignal): Promise<boolean> {
    for (let attempt = 1; attempt <= this.settings.armAttempts && !signal.aborted; attempt++) {
      if ((await this.probe(owner.advertisedAddress, this.settings.probeTimeoutMs)) === 'accepted') return true;
      await delay(this.settings.armIntervalMs);
    }
    if (!signal.aborted)
      this.logger.warn(
        { instanceId: owner.instanceId, address: owner.advertisedAddress },
        'owner address not reachable from the metadata service: its session ends only at its TTL',
      );
    return false;
  }

  private track(check: Promise<void>): void {
    const tracked = check
      .catch((error: unknown) => this.logger.warn({ err: String(error) }, 'early session expiry check failed'))
      .finally(() => this.checks.delete(tracked));
    this.checks.add(tracked);
  }

  private async expireIfGone(owner: OwnerRecord): Promise<void> {
    const path = ownerPath(owner.group, owner.instanceId);
    for (let round = 1; round <= MAX_DROP_ROUNDS; round++) {
      const read = await readRecord(this.context.store, path, OwnerRecordSchema);
      if (read === undefined || read.record.sessionId !== owner.sessionId) return;
      const { verdict, attempts } = await this.judge(owner.advertisedAddress);
      const details = {
        instanceId: owner.instanceId,
        address: owner.advertisedAddress,
        verdict,
        attempts: attempts.join(','),
        round,
      };
      // A stream opened again meanwhile means the process reached this service after the drop.
      if (verdict !== 'refused' || this.watching.has(owner.sessionId) || this.closed) {
        this.logger.info(
          details,
          'owner session watch dropped; the owner is not known dead, its session keeps its TTL',
        );
        return;
      }
      if (await this.expire(read.record, read.version, path, details)) return;
      this.logger.warn(details, 'a keep-alive landed while a dropped owner was judged; judging again');
    }
  }

  /**
   * `refused` after REFUSALS_NEEDED refused attempts `confirmDelayMs` apart, `accepted` after
   * ACCEPTANCES_NEEDED accepted ones, whichever comes first, else `unknown`. An attempt without an answer (a
   * busy machine can hold this process past the probe's timeout) is tried again, at most MAX_DROP_PROBES
   * attempts in all.
   */
  private async judge(address: string): Promise<{ verdict: ProbeVerdict; attempts: ProbeVerdict[] }> {
    const attempts: ProbeVerdict[] = [];
    const count = (verdict: ProbeVerdict): number => attempts.filter((each) => each === verdict).length;
    for (let attempt = 0; attempt < MAX_DROP_PROBES; attempt++) {
      if (attempt > 0) await delay(this.settings.confirmDelayMs);
      attempts.push(await this.probe(address, this.settings.probeTimeoutMs));
      if (count('accepted') === ACCEPTANCES_NEEDED) return { verdict: 'accepted', attempts };
      if (count('refused') === REFUSALS_NEEDED) return { verdict: 'refused', attempts };
    }
    return { verdict: 'unknown', attempts };
  }

  /** One compare-and-set on the version read before the round: false when a keep-alive moved it meanwhile. */
  private async expire(record: OwnerRecord, version: number, path: string, judged: object): Promise<boolean> {
    const now = this.context.now();
    if (!isLive(record, now)) return true;
    try {
      await writeRecord(this.context.store, path, { ...record, expiresAtMs: now }, version);
    } catch (error) {
      if (isBadVersion(error)) return false;
      throw error;
    }
    this.logger.warn(
      { ...judged, ttlLeftMs: record.expiresAtMs - now },
      'owner process gone (connection dropped, address refuses connections): its session expired early',
    );
    return true;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
