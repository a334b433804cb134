import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { managedLedgerPath, MANAGED_LEDGERS_ROOT, TopicName } from '@ledgerline/naming';
import { defaultManagedLedgerLogger } from '../default-logger.js';
import { EntryCache } from '../ledgers/entry-cache.js';
import type { ManagedLedgerEntry } from '../entry.js';
import { firstEntryAtOrAfter, lastEntry, type LedgerView } from '../ledgers/ledger-views.js';
import { infoFromProto, type ManagedLedgerInfoModel } from '@ledgerline/ledger-info';
import { ReadOnlyEntryReader } from './read-only-entry-reader.js';
import { ReadOnlyNotifications } from './read-only-notifications.js';
import {
  DEFAULT_READ_ONLY_LEDGER_SETTINGS,
  type ReadOnlyLedgerSettings,
  type ReadOnlyLedgerStats,
  type ReadOnlyManagedLedgerOptions,
} from './read-only-ledger-settings.js';
import { ManagedLedgerReason } from '../reasons.js';

export { DEFAULT_READ_ONLY_LEDGER_SETTINGS } from './read-only-ledger-settings.js';
export type {
  ReadOnlyLedgerSettings,
  ReadOnlyLedgerStats,
  ReadOnlyManagedLedgerOptions,
} from './read-only-ledger-settings.js';

/**
 * A read-only view of another owner's managed ledger (PIP-63's
 * ReadOnlyManagedLedger): it reads ManagedLedgerInfo from metadata and the
 * entries straight from the ledger store, and never fences, closes or writes
 * anything, so the writer keeps appending undisturbed.
 *
 * The open ledger's last-add-confirmed is learned from the writer's "LAC
 * advanced" notifications (push). Notifications are hints: a reader waiting
 * at the end re-reads the LAC from the ledger store after `lacFallbackMs`
 * without one, and ManagedLedgerInfo is re-read every `metadataRefreshMs`
 * and on every "rolled"/"info-changed" notification, so a lost notification
 * costs latency, never data.
 *
 * This class keeps what the view knows and refreshes it; the entries are
 * read by ReadOnlyEntryReader, the hints arrive through ReadOnlyNotifications.
 */
export class ReadOnlyManagedLedger {
  readonly topic: string;
  readonly path: string;
  readonly name: string;
  private info: ManagedLedgerInfoModel;
  private infoVersion: number;
  /** The last-add-confirmed of each ledger not yet closed in ManagedLedgerInfo. */
  private readonly lacs = new Map<number, number>();
  private readonly reader: ReadOnlyEntryReader;
  private readonly notifications: ReadOnlyNotifications;
  private readonly waiters = new Set<() => void>();
  private readonly deletedListeners = new Set<(error: LedgerlineError) => void>();
  private readonly settings: ReadOnlyLedgerSettings;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private deletedWith: LedgerlineError | undefined;
  private closed = false;
  readonly stats: ReadOnlyLedgerStats = { lacNotifications: 0, lacFallbackReads: 0, metadataReads: 0 };

  private constructor(
    private readonly options: ReadOnlyManagedLedgerOptions,
    topic: TopicName,
    info: ManagedLedgerInfoModel,
    version: number,
  ) {
    this.settings = { ...DEFAULT_READ_ONLY_LEDGER_SETTINGS, ...options.settings };
    this.topic = topic.toString();
    this.path = managedLedgerPath(topic, options.numberOfTopicBuckets ?? 1);
    this.name = this.path.slice(MANAGED_LEDGERS_ROOT.length + 1);
    this.info = info;
    this.infoVersion = version;
    this.notifications = new ReadOnlyNotifications(options.bus, {
      infoChanged: (version) => {
        if (version === undefined || version > this.infoVersion) {
          this.refreshInfo().catch((error: unknown) => this.warn(error));
        }
      },
      lacAdvanced: (notification) => {
        this.stats.lacNotifications++;
        if (notification.confirmedAtMs !== undefined)
          this.options.observeLacPropagationMs?.(Math.max(0, Date.now() - notification.confirmedAtMs));
        this.learnLac(notification.ledgerId, notification.lac);
      },
      warn: (error) => this.warn(error),
    });
    this.reader = new ReadOnlyEntryReader(
      options.ledgerStore,
      new EntryCache(this.settings.entryCacheMaxBytes),
      this.settings.maxStoreReadEntries,
      {
        storeConfirmed: (ledgerId, lac) => {
          if (this.lacs.has(ledgerId) && lac < this.lacs.get(ledgerId)!) this.lacs.set(ledgerId, lac);
        },
        warn: (error) => this.warn(error),
      },
    );
  }

  /** Loads the writer topic's ManagedLedgerInfo and the LAC of its open ledger; NOT_FOUND when it has none. */
  static async open(options: ReadOnlyManagedLedgerOptions): Promise<ReadOnlyManagedLedger> {
    const topic = typeof options.topic === 'string' ? TopicName.parse(options.topic) : options.topic;
    const path = managedLedgerPath(topic, options.numberOfTopicBuckets ?? 1);
    const stored = await options.metadata.getManagedLedgerInfo(path);
    if (stored === undefined) throw notFound(topic.toString());
    const view = new ReadOnlyManagedLedger(options, topic, infoFromProto(stored.value), stored.version);
    view.stats.metadataReads++;
    if (view.info.state === 'deleting') throw notFound(topic.toString());
    view.notifications.listenInfo(view.name, view.path);
    try {
      await view.refreshLacs();
    } catch (error) {
      view.close();
      throw error;
    }
    view.scheduleRefresh();
    return view;
  }

  /** ManagedLedgerInfo's version as this view last read it. */
  get version(): number {
    return this.infoVersion;
  }

  get isDeleted(): boolean {
    return this.deletedWith !== undefined;
  }

  /** The ledgers, oldest first, with the open ones counted up to the LAC this view knows. */
  ledgers(): LedgerView[] {
    return this.info.ledgers.map((l) => {
      if (l.closedAtMs !== undefined) {
        return {
          ledgerId: l.ledgerId,
          entries: l.entries,
          firstOffset: l.firstOffset,
          lastOffset: l.lastOffset ?? l.firstOffset - 1,
          sizeBytes: l.sizeBytes,
          open: false,
          closedAtMs: l.closedAtMs,
        };
      }
      const lac = this.lacs.get(l.ledgerId) ?? -1;
      return {
        ledgerId: l.ledgerId,
        entries: lac + 1,
        firstOffset: l.firstOffset,
        lastOffset: -1,
        sizeBytes: 0,
        open: true,
      };
    });
  }

  /** The last entry readers may read; undefined while no ledger holds one. */
  lastConfirmedPosition(): Position | undefined {
    return lastEntry(this.ledgers());
  }

  /** The first entry still stored at or after `p` (a position in a trimmed ledger moves to the first available one). */
  firstAvailableAtOrAfter(p: Position): Position | undefined {
    return firstEntryAtOrAfter(this.ledgers(), p);
  }

  /** Up to `maxEntries` confirmed entries from `from` on, across ledgers; [] when none is there yet. */
  async readEntries(from: Position, maxEntries: number): Promise<ManagedLedgerEntry[]> {
    this.checkReadable();
    return this.reader.readEntries(this.ledgers(), from, maxEntries);
  }

  /**
   * Resolves when entries after `readPosition` may be there: at once when
   * they are, else on a LAC notification, a metadata change, or the fallback
   * re-read of the LAC; also when `signal` aborts or the topic is deleted.
   */
  waitForEntries(readPosition: Position, signal: AbortSignal): Promise<void> {
    const last = this.lastConfirmedPosition();
    if (this.closed || this.deletedWith !== undefined || signal.aborted) return Promise.resolve();
    if (last !== undefined && comparePositions(readPosition, last) <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
      this.armFallback();
    });
  }

  /**
   * waitSync: resolves once this view has read ManagedLedgerInfo at `version`
   * or later, so a cursor the writer returned is never dispatched against an
   * older ledger list. `lastConfirmed` (the writer's, with the cursor) is
   * learned at once. Tries at most `maxReads` metadata reads.
   */
  async waitForVersion(version: number, lastConfirmed?: Position, maxReads = 10): Promise<void> {
    for (let reads = 0; this.infoVersion < version; reads++) {
      if (reads >= maxReads) {
        throw new LedgerlineError(
          'UNAVAILABLE',
          ManagedLedgerReason.MANAGED_LEDGER_INFO_STALE,
          `${this.topic}: metadata still at version ${this.infoVersion} after ${maxReads} reads, the writer has ${version}: retry`,
        );
      }
      await this.refreshInfo();
    }
    if (lastConfirmed !== undefined) this.learnLac(lastConfirmed.ledgerId, lastConfirmed.entryId);
  }

  /** Called once when the writer's managed ledger is deleted. */
  onDeleted(listener: (error: LedgerlineError) => void): () => void {
    if (this.deletedWith !== undefined) {
      listener(this.deletedWith);
      return () => undefined;
    }
    this.deletedListeners.add(listener);
    return () => this.deletedListeners.delete(listener);
  }

  /** Re-reads ManagedLedgerInfo (coalesced: callers during a read share it). */
  refreshInfo(): Promise<void> {
    this.refreshing ??= this.readInfo().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Stops listening and every timer; waiting readers are released. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.fallbackTimer);
    clearTimeout(this.refreshTimer);
    this.notifications.close();
    this.wakeAll();
  }

  private checkReadable(): void {
    if (this.deletedWith !== undefined) throw this.deletedWith;
    if (this.closed) {
      throw new LedgerlineError('UNAVAILABLE', ManagedLedgerReason.MANAGED_LEDGER_CLOSED, `${this.topic}: view closed`);
    }
  }

  private async readInfo(): Promise<void> {
    if (this.closed) return;
    const stored = await this.options.metadata.getManagedLedgerInfo(this.path);
    this.stats.metadataReads++;
    if (stored === undefined || infoFromProto(stored.value).state === 'deleting') {
      this.markDeleted();
      return;
    }
    if (stored.version <= this.infoVersion) return;
    this.info = infoFromProto(stored.value);
    this.infoVersion = stored.version;
    const open = new Set(this.info.ledgers.filter((l) => l.closedAtMs === undefined).map((l) => l.ledgerId));
    for (const ledgerId of [...this.lacs.keys()]) if (!open.has(ledgerId)) this.forgetLedger(ledgerId);
    await this.refreshLacs();
    this.wakeAll();
  }

  /** Reads the LAC of every ledger still open in the info this view holds, and listens for its notifications. */
  private async refreshLacs(): Promise<void> {
    for (const ledger of this.info.ledgers) {
      if (ledger.closedAtMs !== undefined) continue;
      this.notifications.listenLac(ledger.ledgerId);
      const stored = await this.options.ledgerStore.info(ledger.ledgerId);
      if (stored === undefined) continue;
      this.learnLac(ledger.ledgerId, stored.lastAddConfirmed);
      // Sealed in the store but still open in the info we hold: the writer rolled (or failed over); re-read soon.
      if (stored.state !== 'open') this.scheduleRefresh(this.settings.lacFallbackMs);
    }
  }

  private learnLac(ledgerId: number, lac: number): void {
    if (!this.info.ledgers.some((l) => l.ledgerId === ledgerId && l.closedAtMs === undefined)) return;
    if (lac <= (this.lacs.get(ledgerId) ?? -1)) return;
    this.lacs.set(ledgerId, lac);
    this.wakeAll();
  }

  private forgetLedger(ledgerId: number): void {
    this.lacs.delete(ledgerId);
    this.notifications.forgetLedger(ledgerId);
  }

  /** While readers wait at the end, re-read the LAC from the store every `lacFallbackMs`. */
  private armFallback(): void {
    if (this.fallbackTimer !== undefined || this.closed) return;
    this.fallbackTimer = setTimeout(() => {
      this.fallbackTimer = undefined;
      if (this.waiters.size === 0 || this.closed) return;
      this.stats.lacFallbackReads++;
      this.refreshLacs()
        .catch((error: unknown) => this.warn(error))
        .finally(() => {
          if (this.waiters.size > 0) this.armFallback();
        });
    }, this.settings.lacFallbackMs);
  }

  private scheduleRefresh(delayMs = this.settings.metadataRefreshMs): void {
    if (this.closed) return;
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      this.refreshInfo()
        .catch((error: unknown) => this.warn(error))
        .finally(() => this.scheduleRefresh());
    }, delayMs);
  }

  private markDeleted(): void {
    if (this.deletedWith !== undefined) return;
    this.deletedWith = new LedgerlineError(
      'NOT_FOUND',
      ManagedLedgerReason.MANAGED_LEDGER_DELETED,
      `${this.topic} was deleted`,
    );
    for (const listener of this.deletedListeners) listener(this.deletedWith);
    this.deletedListeners.clear();
    this.close();
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private warn(error: unknown): void {
    const failure = LedgerlineError.from(error);
    (this.options.logger ?? defaultManagedLedgerLogger()).warn(
      { topic: this.topic, reason: failure.reason },
      failure.message,
    );
  }
}

function notFound(topic: string): LedgerlineError {
  return new LedgerlineError('NOT_FOUND', ManagedLedgerReason.MANAGED_LEDGER_DELETED, `${topic} has no managed ledger`);
}
