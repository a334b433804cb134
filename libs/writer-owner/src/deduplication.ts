import type { Position } from '@ledgerline/cursor-codec';
import type { ManagedCursor, ManagedLedger, ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import { decodeMessageEntry } from '@ledgerline/message-format';

/** The cursor whose properties hold the deduplication snapshot (Pulsar's `pulsar.dedup`). */
export const DEDUP_CURSOR_NAME = 'ledgerline.dedup';
/** Cursor property names are at most 256 characters, so producer names with deduplication are too. */
export const MAX_DEDUP_PRODUCER_NAME_LENGTH = 256;
/** Entries read per page while replaying the log after the snapshot. */
const REPLAY_PAGE_ENTRIES = 1_000;
/**
 * How stale a producer's place in the least-recently-active order may get. Moving it costs a delete and an insert
 * in the map (and, as the deleted slots pile up, a longer walk to the oldest): for a busy producer that was two of
 * each per entry, to keep an order only the bound on producers reads.
 */
const REORDER_INTERVAL_MS = 100;

export interface StoredReceipt {
  position: Position;
  firstOffset: number;
  lastOffset: number;
  publishTimeMs: number;
  sequenceId: bigint;
}

interface ProducerState {
  /** The highest sequence id the ledger store holds for this producer. */
  persisted: bigint;
  /** The highest sequence id sent to the ledger (persisted or in flight). */
  pushed: bigint;
  lastActiveMs: number;
  /** When this producer was last moved to the end of the map's order (see touch). */
  movedAtMs: number;
  /** The receipt of the last entry persisted, returned for its duplicate. */
  lastReceipt: StoredReceipt | undefined;
  /** Settles when this producer's appends in flight have settled. */
  inFlight: Promise<unknown>;
  /**
   * Set when an append of this producer failed: the lowest sequence id not
   * stored, and the stream it came on. Until the producer resends from it
   * (or reconnects), a later entry on that stream is refused: stored, it
   * would make the resend of the failed one look like a duplicate.
   */
  gap: { from: bigint; stream: object | undefined } | undefined;
}

export interface DedupSettings {
  maxProducers: number;
  producerInactivityMs: number;
  snapshotIntervalEntries: number;
  snapshotIntervalMs: number;
}

export type DedupVerdict =
  | { kind: 'new' }
  | { kind: 'duplicate'; receipt: StoredReceipt | undefined; sequenceId: bigint }
  /** Wait for this producer's appends in flight, then ask again. */
  | { kind: 'wait'; until: Promise<unknown> }
  /** An earlier entry of this producer was not stored: it must be resent first. */
  | { kind: 'gap'; resendFrom: bigint };

/**
 * Pulsar's message deduplication for one topic: per producer name, the
 * highest sequence id persisted. An entry whose first sequence id is not above
 * it is a duplicate and is not appended again. The state is snapshotted into
 * the properties of the `ledgerline.dedup` cursor, whose mark-delete is the
 * last entry the snapshot covers; a new owner loads the snapshot and replays
 * the log after it, so the marks survive failover. Bounded: at most
 * maxProducers producers (least recently active evicted), and a producer
 * silent for producerInactivityMs is forgotten (on its next publish, and
 * dropped from the next snapshot).
 *
 * Order within a stream: once an append fails, the producer's later entries
 * on the same stream are refused until it resends from the failed one, as
 * Pulsar fences the topic so its producers reconnect and resend in order. A
 * new stream starts afresh (the producer resends what it still holds; what it
 * gave up on it no longer sends).
 */
export class Deduplication {
  private readonly producers = new Map<string, ProducerState>();
  private entriesSinceSnapshot = 0;
  private lastSnapshotMs: number;
  private snapshotting: Promise<void> | undefined;

  private constructor(
    private readonly cursor: ManagedCursor,
    private readonly settings: DedupSettings,
    private readonly now: () => number,
  ) {
    this.lastSnapshotMs = now();
  }

  /** Loads the snapshot and replays every entry after it. */
  static async recover(ledger: ManagedLedger, settings: DedupSettings, now: () => number): Promise<Deduplication> {
    const cursor = await ledger.openCursor(DEDUP_CURSOR_NAME, { start: { initialPosition: 'earliest' } });
    const dedup = new Deduplication(cursor, settings, now);
    for (const [producer, value] of cursor.getProperties()) {
      dedup.persisted(producer, BigInt(value), undefined);
    }
    for (;;) {
      const entries = await cursor.readEntries({ maxEntries: REPLAY_PAGE_ENTRIES });
      if (entries.length === 0) break;
      for (const entry of entries) {
        const stored = storedEntry(entry);
        if (stored !== undefined) dedup.replayed(stored.producer, stored.highest, stored.receipt);
      }
    }
    return dedup;
  }

  /**
   * Records entries the managed ledger found stored after their appends had
   * failed as in doubt: their sequence ids are taken, so a resend is a duplicate.
   */
  adopted(entries: readonly ManagedLedgerEntry[]): void {
    for (const entry of entries) {
      const stored = storedEntry(entry);
      if (stored !== undefined) this.persisted(stored.producer, stored.highest, stored.receipt);
    }
  }

  get producerCount(): number {
    return this.producers.size;
  }

  /**
   * Decides what to do with an entry of `producer` taking sequence ids
   * first..highest. A producer silent past producerInactivityMs is forgotten
   * here, not only at the next snapshot, so when it is forgotten does not
   * depend on other producers' traffic. A re-send counts as activity.
   * `stream` is the stream the entry came on (any object that is the same
   * for the stream's life). With `contiguous`, the producer numbers its
   * entries without gaps, so one that does not follow the highest sent is a
   * gap on any stream.
   */
  check(producer: string, first: bigint, stream?: object, contiguous = false): DedupVerdict {
    const state = this.producers.get(producer);
    if (state === undefined) return { kind: 'new' };
    if (this.inactive(state, this.now() - this.settings.producerInactivityMs)) {
      this.producers.delete(producer);
      return { kind: 'new' };
    }
    if (first <= state.persisted) {
      this.touch(producer);
      const receipt = state.lastReceipt?.sequenceId === first ? state.lastReceipt : undefined;
      return { kind: 'duplicate', receipt, sequenceId: first };
    }
    if (state.gap !== undefined) {
      if (state.gap.stream === stream && first > state.gap.from) return { kind: 'gap', resendFrom: state.gap.from };
      state.gap = undefined;
    }
    if (first <= state.pushed) return { kind: 'wait', until: state.inFlight };
    // A producer that numbers without gaps (Kafka's idempotent one) skipped some: those were not stored here.
    if (contiguous && first > state.pushed + 1n) return { kind: 'gap', resendFrom: state.pushed + 1n };
    return { kind: 'new' };
  }

  /** Records an append sent for `producer` up to `highest`; `settled` resolves when it is answered. */
  pushed(producer: string, highest: bigint, settled: Promise<unknown>): void {
    const state = this.touch(producer);
    state.pushed = highest;
    state.inFlight = settled;
  }

  /** Records an entry the ledger store holds. */
  persisted(producer: string, highest: bigint, receipt: StoredReceipt | undefined): void {
    const state = this.touch(producer);
    if (highest > state.persisted) {
      state.persisted = highest;
      state.lastReceipt = receipt;
    }
    if (state.pushed < state.persisted) state.pushed = state.persisted;
    // An append failed as in doubt that had landed after all: nothing is missing.
    if (state.gap !== undefined && state.persisted >= state.gap.from) state.gap = undefined;
    this.entriesSinceSnapshot++;
  }

  /**
   * Records an entry read back from the log after the snapshot. The log is
   * the later word: a producer forgotten and back with lower sequence ids
   * after the snapshot was taken has the entry's mark, not the snapshot's (as
   * Pulsar's replay overwrites).
   */
  private replayed(producer: string, highest: bigint, receipt: StoredReceipt): void {
    const state = this.touch(producer);
    state.persisted = highest;
    state.pushed = highest;
    state.lastReceipt = receipt;
    this.entriesSinceSnapshot++;
  }

  /** Silent since before `cutoff`, with nothing in flight. */
  private inactive(state: ProducerState, cutoff: number): boolean {
    return state.lastActiveMs < cutoff && state.pushed === state.persisted;
  }

  /**
   * An append of `producer` from sequence id `first`, sent on `stream`,
   * failed: what was in flight was not stored, so it may come again, and
   * nothing after it may be stored before it.
   */
  failed(producer: string, first: bigint, stream?: object): void {
    const state = this.producers.get(producer);
    if (state === undefined) return;
    state.pushed = state.persisted;
    if (first <= state.persisted) return;
    const gap = state.gap;
    if (gap === undefined || gap.stream !== stream || first < gap.from) state.gap = { from: first, stream };
  }

  /**
   * Marks `producer` active. The map's order is least recently active first, to within REORDER_INTERVAL_MS:
   * a producer is moved to its end at most that often, not twice for every entry it publishes.
   */
  private touch(producer: string): ProducerState {
    const now = this.now();
    let state = this.producers.get(producer);
    if (state !== undefined) {
      state.lastActiveMs = now;
      if (now - state.movedAtMs < REORDER_INTERVAL_MS) return state;
      this.producers.delete(producer);
    } else {
      state = {
        persisted: -1n,
        pushed: -1n,
        lastActiveMs: now,
        movedAtMs: now,
        lastReceipt: undefined,
        inFlight: Promise.resolve(),
        gap: undefined,
      };
      // The oldest is looked up only at the bound: the walk to it passes every deleted slot of the map.
      if (this.producers.size >= this.settings.maxProducers) {
        const oldest = this.producers.keys().next();
        if (oldest.done !== true) this.producers.delete(oldest.value);
      }
    }
    state.movedAtMs = now;
    this.producers.set(producer, state);
    return state;
  }

  /** Snapshots when enough entries or time went by; `lastEntry` is the last entry the marks cover. */
  maybeSnapshot(lastEntry: Position | undefined): void {
    const due =
      this.entriesSinceSnapshot >= this.settings.snapshotIntervalEntries ||
      (this.entriesSinceSnapshot > 0 && this.now() - this.lastSnapshotMs >= this.settings.snapshotIntervalMs);
    if (due && this.snapshotting === undefined && lastEntry !== undefined) {
      this.snapshotting = this.snapshot(lastEntry).finally(() => (this.snapshotting = undefined));
      this.snapshotting.catch(() => undefined);
    }
  }

  /**
   * Writes the marks as cursor properties and moves the cursor's mark-delete
   * to `lastEntry`: a later owner replays only what follows. Every mark is at
   * least as new as `lastEntry`, since entries are persisted in order.
   */
  async snapshot(lastEntry: Position | undefined): Promise<void> {
    if (this.cursor.state !== 'open') return;
    this.markSnapshot(lastEntry);
    await this.cursor.flush();
  }

  /**
   * The snapshot without its write: the cursor holds the marks and the
   * mark-delete, and persists them with its next flush or its close. A
   * hand-over takes it so (the ledger's close persists every cursor at once),
   * which spares the pause one store write of its own.
   */
  markSnapshot(lastEntry: Position | undefined): void {
    if (this.cursor.state !== 'open') return;
    const cutoff = this.now() - this.settings.producerInactivityMs;
    for (const [producer, state] of this.producers) {
      if (this.inactive(state, cutoff)) this.producers.delete(producer);
    }
    const stored = this.cursor.getProperties();
    for (const name of stored.keys()) {
      if (!this.producers.has(name)) this.cursor.setProperty(name, undefined);
    }
    for (const [producer, state] of this.producers) {
      if (state.persisted >= 0n) this.cursor.setProperty(producer, state.persisted);
      // Nothing persisted since it was (re)learned (forgotten, back, and its append failed): an older mark must not stay.
      else if (stored.has(producer)) this.cursor.setProperty(producer, undefined);
    }
    if (lastEntry !== undefined) this.cursor.ackCumulative(lastEntry);
    this.entriesSinceSnapshot = 0;
    this.lastSnapshotMs = this.now();
  }
}

/** The producer, highest sequence id and receipt an entry in Pulsar's layout carries; undefined without a producer. */
function storedEntry(
  entry: ManagedLedgerEntry,
): { producer: string; highest: bigint; receipt: StoredReceipt } | undefined {
  let header;
  try {
    header = decodeMessageEntry(entry.payload).header;
  } catch {
    return undefined; // An entry not in Pulsar's layout carries no producer to deduplicate.
  }
  if (header.producerName === '') return undefined;
  return {
    producer: header.producerName,
    highest: header.highestSequenceId,
    receipt: {
      position: entry.position,
      firstOffset: entry.firstOffset,
      lastOffset: entry.lastOffset,
      publishTimeMs: header.publishTimeMs,
      sequenceId: header.sequenceId,
    },
  };
}
