import type { Position } from '@ledgerline/cursor-codec';
import type { ManagedCursor, ManagedLedger, ManagedLedgerEntry } from '@ledgerline/managed-ledger';
import { decodeMessageEntry } from '@ledgerline/message-format';
import type { StoredReceipt } from './receipts.js';
import type { TopicBatch } from './topic-batch.js';

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

/** A producer's entries of one batch handed to the ledger and not all persisted: a resend of one is answered by it. */
interface InFlightRun {
  batch: TopicBatch;
  from: number;
  to: number;
  /** The highest sequence id of the run's entries in flight. */
  highest: bigint;
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
  /** The runs of entries above `persisted` and up to `pushed`, oldest first. */
  runs: InFlightRun[];
}

export interface DedupSettings {
  maxProducers: number;
  producerInactivityMs: number;
  snapshotIntervalEntries: number;
  snapshotIntervalMs: number;
}

/**
 * What deduplication says of a range of a batch's entries (`from` inclusive, `to` exclusive; entries
 * already answered inside it are skipped): new (to be stored), a duplicate of one persisted (`receipt` is the
 * producer's last persisted entry, the place a duplicate of that very entry is answered with), a duplicate
 * of one in flight (answered with that entry's outcome once its write settles: `inFlight`), or a gap (a
 * producer numbering without gaps skipped ids: refused until it resends from `resendFrom`).
 */
export type DedupRange =
  | { kind: 'new'; from: number; to: number }
  | { kind: 'duplicate'; from: number; to: number; receipt: StoredReceipt | undefined }
  | { kind: 'in-flight'; from: number; to: number }
  | { kind: 'gap'; from: number; to: number; resendFrom: bigint };

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
 * Entries are checked a batch at a time (check): one map lookup per run of a
 * producer's entries, `pushed` recorded once per run; `persisted` once per
 * producer per store write. A duplicate of an entry still in flight is
 * answered by that entry when its write settles: nothing waits and asks
 * again. The order of a stream after a refusal is its ProducerFence's.
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

  /** Each producer with an entry stored and not silent past producerInactivityMs, least recently active first. */
  *storedMarks(): Generator<{ name: string; highest: bigint; receipt: StoredReceipt | undefined }> {
    const cutoff = this.now() - this.settings.producerInactivityMs;
    for (const [name, state] of this.producers) {
      if (state.persisted >= 0n && !this.inactive(state, cutoff))
        yield { name, highest: state.persisted, receipt: state.lastReceipt };
    }
  }

  /**
   * Decides, in one pass, what to do with entries `from` to `to` of `batch` (those already answered are
   * skipped) and records the new ones as pushed: they must go to the ledger, in order, in the same
   * synchronous run, so no other batch hears their ids are new. A producer silent past producerInactivityMs
   * is forgotten here, not only at the next snapshot, so when it is forgotten does not depend on other
   * producers' traffic. A re-send counts as activity. An entry with `contiguousSequence` comes from a producer
   * that numbers without gaps, so one that does not follow the highest sent is a gap on any stream.
   */
  check(batch: TopicBatch, from: number, to: number): DedupRange[] {
    const ranges: DedupRange[] = [];
    const cutoff = this.now() - this.settings.producerInactivityMs;
    let index = from;
    while (index < to) {
      const producer = batch.messages[index]!.producerName;
      let end = index + 1;
      while (end < to && batch.messages[end]!.producerName === producer) end++;
      if (producer === '') addRange(ranges, 'new', index, end);
      else this.checkRun(batch, index, end, producer, cutoff, ranges);
      index = end;
    }
    return ranges;
  }

  /** check for one run of `producer`'s entries: one lookup, and `pushed` recorded once. */
  private checkRun(
    batch: TopicBatch,
    from: number,
    to: number,
    producer: string,
    cutoff: number,
    ranges: DedupRange[],
  ): void {
    let known = this.producers.get(producer);
    if (known !== undefined && this.inactive(known, cutoff)) {
      this.producers.delete(producer);
      known = undefined;
    }
    const state = this.touch(producer);
    let pushed = state.pushed;
    let runHighest: bigint | undefined;
    for (let index = from; index < to; index++) {
      if (batch.isAnswered(index)) continue;
      const message = batch.messages[index]!;
      const first = message.sequenceId;
      if (first <= state.persisted) {
        addRange(ranges, 'duplicate', index, index + 1, state.lastReceipt);
      } else if (first <= pushed) {
        addRange(ranges, 'in-flight', index, index + 1);
      } else if (known !== undefined && message.contiguousSequence && first > pushed + 1n) {
        // A producer that numbers without gaps (Kafka's idempotent one) skipped some: those were not stored here.
        addRange(ranges, 'gap', index, index + 1, pushed + 1n);
      } else {
        addRange(ranges, 'new', index, index + 1);
        pushed = batch.highest(index);
        runHighest = pushed;
      }
    }
    if (runHighest === undefined) return;
    state.pushed = pushed;
    state.runs.push({ batch, from, to, highest: runHighest });
  }

  /**
   * Where the entry of `producer` in flight that holds `sequenceId` is (the first one handed to the ledger
   * whose ids reach it), for a duplicate to be answered by; undefined when none is in flight.
   */
  inFlight(producer: string, sequenceId: bigint): { batch: TopicBatch; index: number } | undefined {
    const state = this.producers.get(producer);
    if (state === undefined) return undefined;
    for (const run of state.runs) {
      if (run.highest < sequenceId) continue;
      for (let index = run.from; index < run.to; index++) {
        if (run.batch.wasAppended(index) && run.batch.highest(index) >= sequenceId) return { batch: run.batch, index };
      }
    }
    return undefined;
  }

  /** Records `entries` entries of `producer` the ledger store holds, the last taking ids up to `highest`. */
  persisted(producer: string, highest: bigint, receipt: StoredReceipt | undefined, entries = 1): void {
    const state = this.touch(producer);
    if (highest > state.persisted) {
      state.persisted = highest;
      state.lastReceipt = receipt;
    }
    if (state.pushed < state.persisted) state.pushed = state.persisted;
    const runs = state.runs;
    while (runs.length > 0 && runs[0]!.highest <= state.persisted) runs.shift();
    this.entriesSinceSnapshot += entries;
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
   * An append of `producer` from sequence id `first` failed: it was not stored, nor were that producer's
   * appends sent after it (the managed ledger fails what is queued behind a failed write), so their ids
   * may come again as new. What was sent before it stays in flight.
   */
  failed(producer: string, first: bigint): void {
    const state = this.producers.get(producer);
    if (state === undefined) return;
    let pushed = state.persisted;
    const kept: InFlightRun[] = [];
    for (const run of state.runs) {
      let highest: bigint | undefined;
      for (let index = run.from; index < run.to; index++) {
        if (!run.batch.wasAppended(index) || run.batch.messages[index]!.sequenceId >= first) continue;
        const reaches = run.batch.highest(index);
        if (highest === undefined || reaches > highest) highest = reaches;
      }
      if (highest === undefined || highest <= state.persisted) continue;
      run.highest = highest;
      kept.push(run);
      if (highest > pushed) pushed = highest;
    }
    state.runs = kept;
    state.pushed = pushed;
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
        runs: [],
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

/** Adds entries `from` to `to` to the ranges, extending the last one when it is of the same kind and adjacent. */
function addRange(
  ranges: DedupRange[],
  kind: DedupRange['kind'],
  from: number,
  to: number,
  detail?: StoredReceipt | bigint,
): void {
  const last = ranges[ranges.length - 1];
  if (last !== undefined && last.kind === kind && last.to === from) {
    const sameDetail =
      (kind !== 'duplicate' || (last as { receipt?: StoredReceipt }).receipt === detail) &&
      (kind !== 'gap' || (last as { resendFrom?: bigint }).resendFrom === detail);
    if (sameDetail) {
      last.to = to;
      return;
    }
  }
  if (kind === 'duplicate') ranges.push({ kind, from, to, receipt: detail as StoredReceipt | undefined });
  else if (kind === 'gap') ranges.push({ kind, from, to, resendFrom: detail as bigint });
  else ranges.push({ kind, from, to });
}
