import { comparePositions, type CheckedEntryAcks, type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import {
  ManagedLedgerReason,
  ReadOnlyCursorState,
  type AckDelta,
  type ReadOnlyManagedLedger,
  type SeekTarget,
} from '@ledgerline/managed-ledger';
import { positionFromRequest, positionMessage, safeNumber, writerEntry, type WriterEntry } from '@ledgerline/ownership';
import { InitialPosition, type CursorData } from '@ledgerline/proto';
import type { SubscriptionSource } from '@ledgerline/subscriptions';
import type { ReadOnlySettings } from './config.js';
import { acksOf, deltaMessage } from './cursor-data.js';
import type { WriterClients } from './writer-clients.js';
import { readWriterCursor } from './writer-cursor.js';

/** Reads that found only acknowledged entries before readEntries gives the subscription an empty answer. */
const MAX_SKIP_ROUNDS = 16;

export interface RemoteCursorOptions {
  view: ReadOnlyManagedLedger;
  writerTopic: string;
  subscription: string;
  writer: WriterClients;
  settings: ReadOnlySettings;
  logger: { warn(details: object, message: string): void };
}

/**
 * The subscriptions lib's source on a read-only owner (PIP-63): entries come
 * from the read-only view of the writer's managed ledger, the cursor stays on
 * the writer owner. Acks are applied to the local copy at once (dispatch never
 * waits for the writer) and sent as deltas, coalesced: at most
 * `cursorSyncIntervalMs` after the first unsent ack, or at once when
 * `cursorSyncMaxAcks` are waiting. A failed update is retried with backoff
 * until it lands and never blocks consumers; what was not sent when this
 * owner dies is at most redelivered, because the writer's state only ever
 * grows by union.
 */
export class RemoteCursorSource implements SubscriptionSource<WriterEntry> {
  private readPosition: Position;
  private pendingAcks = 0;
  private syncTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private failures = 0;
  private closed = false;

  private constructor(
    private readonly options: RemoteCursorOptions,
    private readonly state: ReadOnlyCursorState,
  ) {
    this.readPosition = after(state.markDelete);
    this.scheduleRefresh();
  }

  /**
   * CreateCursor on the writer (or loads the cursor it has), then waits until
   * the view has caught up with the managed-ledger version the writer
   * answered with (waitSync), so dispatch never starts from a stale ledger list.
   */
  static async open(
    options: RemoteCursorOptions,
    start: { initialPosition: 'earliest' | 'latest' } | { offset: number },
  ): Promise<RemoteCursorSource> {
    const { writer, writerTopic, subscription } = options;
    // Without its ranges: a cursor that existed may hold more than one answer can; they are read below.
    const answer = await writer.call(writerTopic, (c) =>
      c.cursors.createCursor(
        {
          topic: writerTopic,
          subscription,
          withoutRanges: true,
          start:
            'offset' in start
              ? { case: 'offset', value: BigInt(start.offset) }
              : {
                  case: 'initialPosition',
                  value: start.initialPosition === 'earliest' ? InitialPosition.EARLIEST : InitialPosition.LATEST,
                },
        },
        writer.callOptions,
      ),
    );
    const cursor = answer.created
      ? answer.cursor
      : await readWriterCursor(writer, writerTopic, subscription, options.settings.cursorMergeMaxRanges);
    await options.view.waitForVersion(
      safeNumber(cursor?.managedLedgerVersion ?? 0n, 'managed_ledger_version'),
      cursor?.lastConfirmedEntry === undefined ? undefined : positionFromRequest(cursor.lastConfirmedEntry),
    );
    const state = new ReadOnlyCursorState(
      () => options.view.ledgers(),
      acksOf(cursor),
      safeNumber(cursor?.resetEpoch ?? 0n, 'reset_epoch'),
      options.settings.maxDeltaRanges,
    );
    return new RemoteCursorSource(options, state);
  }

  async readEntries(maxEntries: number): Promise<WriterEntry[]> {
    if (comparePositions(this.readPosition, this.state.markDelete) <= 0)
      this.readPosition = after(this.state.markDelete);
    for (let round = 0; round < MAX_SKIP_ROUNDS; round++) {
      const entries = await this.options.view.readEntries(this.readPosition, maxEntries);
      const last = entries[entries.length - 1];
      if (last === undefined) return [];
      this.readPosition = after(last.position);
      const unacked = entries.filter((e) => !this.state.isAcknowledged(e.position));
      if (unacked.length > 0) return unacked.map(writerEntry);
    }
    return [];
  }

  waitForEntries(signal: AbortSignal): Promise<void> {
    return this.options.view.waitForEntries(this.readPosition, signal);
  }

  async readPositions(positions: readonly Position[]): Promise<WriterEntry[]> {
    const found: WriterEntry[] = [];
    for (const position of positions) {
      if (this.state.isAcknowledged(position)) continue;
      const [entry] = await this.options.view.readEntries(position, 1);
      if (entry !== undefined && comparePositions(entry.position, position) === 0) found.push(writerEntry(entry));
    }
    return found;
  }

  ack({ positions, ranges }: CheckedEntryAcks): void {
    this.state.ack(positions, ranges);
    let entries = positions.length;
    for (const r of ranges) entries += r.lastEntryId - r.firstEntryId + 1;
    this.acked(entries);
  }

  ackCumulative(position: Position): void {
    this.state.ackCumulative(position);
    this.acked(1);
  }

  ackBatchIndexes(position: Position, indexes: readonly number[], batchSize: number): void {
    this.state.ackBatchIndexes(position, indexes, batchSize);
    this.acked(1);
  }

  isAcknowledged(position: Position): boolean {
    return this.state.isAcknowledged(position);
  }

  unackedBatchIndexes(position: Position, numMessages: number): readonly number[] | undefined {
    const acked = this.state.ackedBatchIndexes(position);
    if (acked === undefined) return undefined;
    const done = new Set(acked);
    return Array.from({ length: numMessages }, (_, i) => i).filter((i) => !done.has(i));
  }

  /** A reset by epoch on the writer: everything before the target consumed, from it on not. */
  async seek(target: SeekTarget): Promise<Position> {
    const position = await this.resolve(target);
    const { writer, writerTopic, subscription } = this.options;
    const answer = await writer.call(writerTopic, (c) =>
      c.cursors.updateCursor(
        {
          topic: writerTopic,
          subscription,
          update: {
            case: 'reset',
            value: { position: positionMessage(position), expectedResetEpoch: BigInt(this.state.resetEpoch) },
          },
        },
        writer.callOptions,
      ),
    );
    this.adopt(answer.cursor, true);
    return this.readPosition;
  }

  async backlog(): Promise<number> {
    return this.state.backlogEntries();
  }

  markDeletePosition(): Position {
    return this.state.markDelete;
  }

  /** Resolves once every ack taken so far is on the writer (ack receipts wait for it); rejects when the writer refuses. */
  async flush(): Promise<void> {
    while (!this.state.isSynced || this.syncing !== undefined) {
      if (this.syncing !== undefined) {
        await this.syncing;
        continue;
      }
      await this.sync(true);
    }
  }

  /** Sends what is unsent one last time (best effort) and stops the timers. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refreshTimer);
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    await this.flush().catch(() => undefined);
  }

  private acked(count: number): void {
    this.pendingAcks += count;
    if (this.pendingAcks >= this.options.settings.cursorSyncMaxAcks) this.startSync(0);
    else this.startSync(this.options.settings.cursorSyncIntervalMs);
  }

  private startSync(delayMs: number): void {
    if (this.closed) return;
    if (this.syncTimer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.syncTimer);
    }
    this.syncTimer = setTimeout(() => {
      this.syncTimer = undefined;
      this.sync(false).catch(() => undefined);
    }, delayMs);
  }

  /** One UpdateCursor with what is unsent; on failure it is handed back and retried with backoff. */
  private sync(throwOnFailure: boolean): Promise<void> {
    if (this.syncing !== undefined) return this.syncing;
    const delta = this.state.takeDelta();
    if (delta === undefined) return Promise.resolve();
    this.pendingAcks = 0;
    this.syncing = this.send(delta)
      .then(
        () => {
          this.failures = 0;
        },
        (thrown: unknown) => {
          this.state.unsent(delta);
          const error = LedgerlineError.from(thrown);
          this.failures++;
          const { cursorSyncRetryMs, cursorSyncMaxBackoffMs } = this.options.settings;
          const backoff = Math.min(cursorSyncMaxBackoffMs, cursorSyncRetryMs * 2 ** Math.min(this.failures, 16));
          this.options.logger.warn(
            { topic: this.options.writerTopic, subscription: this.options.subscription, reason: error.reason },
            `cursor update to the writer failed (${error.message}); retrying in ${backoff} ms`,
          );
          this.startSync(backoff);
          if (throwOnFailure) throw error;
        },
      )
      .finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async send(delta: AckDelta): Promise<void> {
    const { writer, writerTopic, subscription } = this.options;
    try {
      const answer = await writer.call(writerTopic, (c) =>
        // The answer without ranges: this delta's own acks are here already, and a large cursor's ranges
        // would not fit an answer; what other owners acknowledged comes with the next reload.
        c.cursors.updateCursor(
          {
            topic: writerTopic,
            subscription,
            update: { case: 'delta', value: deltaMessage(delta) },
            withoutRanges: true,
          },
          writer.callOptions,
        ),
      );
      this.adopt(answer.cursor, false);
    } catch (thrown) {
      const error = LedgerlineError.from(thrown);
      // Someone reset the cursor meanwhile (a seek elsewhere): its acks of the old epoch are void; take the new state.
      if (error.reason !== ManagedLedgerReason.CURSOR_RESET_EPOCH_MISMATCH) throw error;
      await this.reload();
    }
  }

  /** Re-reads the writer's cursor (acks made on the writer or another read-only owner) and merges it. */
  private async reload(): Promise<void> {
    const { writer, writerTopic, subscription } = this.options;
    this.adopt(
      await readWriterCursor(writer, writerTopic, subscription, this.options.settings.cursorMergeMaxRanges),
      false,
    );
  }

  /** The writer's answer: a newer epoch replaces the local state (a reset), the same epoch merges by union. */
  private adopt(cursor: CursorData | undefined, reset: boolean): void {
    if (cursor === undefined) return;
    const epoch = safeNumber(cursor.resetEpoch, 'reset_epoch');
    if (reset || epoch !== this.state.resetEpoch) {
      this.state.reset(acksOf(cursor), epoch);
      this.readPosition = after(this.state.markDelete);
      return;
    }
    this.state.merge(acksOf(cursor));
  }

  private scheduleRefresh(): void {
    if (this.closed) return;
    this.refreshTimer = setTimeout(() => {
      this.reload()
        .catch((thrown: unknown) => {
          const error = LedgerlineError.from(thrown);
          this.options.logger.warn({ topic: this.options.writerTopic, reason: error.reason }, error.message);
        })
        .finally(() => this.scheduleRefresh());
    }, this.options.settings.metadataRefreshMs);
  }

  private async resolve(target: SeekTarget): Promise<Position> {
    if ('position' in target) return target.position;
    const { writer, writerTopic } = this.options;
    const answer = await writer.call(writerTopic, (c) =>
      c.topics.findPosition(
        {
          topic: writerTopic,
          target:
            'offset' in target
              ? { case: 'offset', value: BigInt(target.offset) }
              : { case: 'timestampMs', value: BigInt(target.timestampMs) },
        },
        writer.callOptions,
      ),
    );
    return positionFromRequest(answer.position);
  }
}

/** Where a reader that consumed `p` goes next (the view skips to the next ledger when `p` was a ledger's last). */
function after(p: Position): Position {
  return { ledgerId: p.ledgerId, entryId: p.entryId + 1 };
}
