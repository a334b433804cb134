import { LedgerlineError } from '@ledgerline/errors';
import type { Logger } from 'pino';
import type { AdminContext } from '../admin-context.js';
import { OwnerControls } from './owner-controls.js';

/** How the metadata service treats a client's report of an owner it cannot reach. */
export interface UnreachableOwnerSettings {
  /** A topic moved off an owner for this reason is not moved again for this long, in ms; 0 turns moving off. */
  unreachableOwnerCooldownMs: number;
  /** How long a lookup waits for such a move to end before it answers with the owner it has, in ms. */
  unreachableOwnerMoveWaitMs: number;
}

export const DEFAULT_UNREACHABLE_OWNER_SETTINGS: UnreachableOwnerSettings = {
  unreachableOwnerCooldownMs: 30_000,
  unreachableOwnerMoveWaitMs: 500,
};

/** Topics remembered as moved within the cooldown, at most: a report past it moves nothing until some expire. */
const MAX_REMEMBERED_TOPICS = 100_000;
/** Moves under way at once, at most: a report past it moves nothing (the client reports again later). */
const MAX_MOVES_IN_FLIGHT = 64;
/** The bound on one move (the owner's transfer), which may go on after the lookup answered. */
const MOVE_TIMEOUT_MS = 30_000;

/**
 * Moves a topic off an owner its clients report they cannot reach, when the
 * owner still holds the topic's lease (the lookup named it) and answers this
 * service: the clients and the owner are cut off from each other only, so
 * the lease would never lapse and the clients would wait for the partition to
 * heal. The owner transfers the topic (PIP-307's order, so nothing is lost)
 * to another owner its group places it on. An owner that does not answer
 * either is dead or cut off from this service too: its session lapses (or
 * ends early, session-liveness.ts) and nothing is moved here.
 *
 * One client's report moves the topic for all its clients, so a client whose
 * own network fails could move topics around: each topic moves for this
 * reason at most once per cooldown, and at most MAX_MOVES_IN_FLIGHT at once.
 */
export class UnreachableOwners {
  readonly settings: UnreachableOwnerSettings;
  logger: Pick<Logger, 'info' | 'warn'> | undefined;
  private readonly movedAtMs = new Map<string, number>();
  private readonly moving = new Map<string, Promise<boolean>>();

  constructor(
    private readonly context: AdminContext,
    readonly controls: OwnerControls,
    settings: Partial<UnreachableOwnerSettings> = {},
  ) {
    this.settings = { ...DEFAULT_UNREACHABLE_OWNER_SETTINGS, ...settings };
  }

  /**
   * Has the owner at `address` move `topic` (the name its lease has) to
   * another owner, unless it moved for this reason within the cooldown.
   * Resolves true once the move ended within the wait, so the lookup answers
   * the new owner; false when nothing moved (yet), and at once for a report
   * of a topic whose move is under way.
   */
  async moveOff(topic: string, address: string): Promise<boolean> {
    if (this.settings.unreachableOwnerCooldownMs === 0) return false;
    // A move under way already made one lookup wait; the others answer at once (an owner whose host is gone
    // can hold the move up to its deadline, and no lookup should wait for that more than once).
    if (this.moving.has(topic)) return false;
    const now = this.context.now();
    this.forgetExpired(now);
    const movedAt = this.movedAtMs.get(topic);
    if (movedAt !== undefined && now - movedAt < this.settings.unreachableOwnerCooldownMs) return false;
    if (this.moving.size >= MAX_MOVES_IN_FLIGHT || this.movedAtMs.size >= MAX_REMEMBERED_TOPICS) return false;
    this.movedAtMs.set(topic, now);
    const move = this.move(topic, address).finally(() => this.moving.delete(topic));
    this.moving.set(topic, move);
    return this.waitFor(move);
  }

  private async move(topic: string, address: string): Promise<boolean> {
    try {
      const moved = await this.controls
        .to(address)
        .transferTopic({ topic, targetInstanceId: '' }, { deadlineMs: MOVE_TIMEOUT_MS });
      this.logger?.info(
        { topic, from: address, to: moved.targetAddress, pausedMs: Number(moved.pausedMs) },
        'moved a topic off an owner its clients could not reach',
      );
      return true;
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      // It did not answer this service either: keep no client for an owner that may be gone for good.
      this.controls.forget(address);
      this.logger?.warn(
        { topic, from: address, err: error.message },
        'a topic whose clients could not reach its owner was not moved',
      );
      return false;
    }
  }

  private async waitFor(move: Promise<boolean>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.settings.unreachableOwnerMoveWaitMs);
    });
    try {
      return await Promise.race([move, waited]);
    } finally {
      clearTimeout(timer);
    }
  }

  private forgetExpired(now: number): void {
    for (const [topic, movedAt] of this.movedAtMs) {
      // Insertion order is time order: the first one still in its cooldown ends the sweep.
      if (now - movedAt < this.settings.unreachableOwnerCooldownMs) return;
      this.movedAtMs.delete(topic);
    }
  }
}
