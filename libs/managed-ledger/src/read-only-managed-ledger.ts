import {
  decodeLacAdvanced,
  decodeManagedLedgerNotification,
  ledgerLacSubject,
  managedLedgerSubject,
  metadataChangedSubject,
  type Bus,
  type BusSubscription,
} from '@ledgerline/bus';
import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import { LedgerlineError } from '@ledgerline/errors';
import { LedgerStoreReason, type LedgerStore } from '@ledgerline/ledger-store';
import { managedLedgerPath, MANAGED_LEDGERS_ROOT, TopicName } from '@ledgerline/naming';
import { defaultManagedLedgerLogger } from './default-logger.js';
import { EntryCache } from './entry-cache.js';
import type { ManagedLedgerEntry } from './entry.js';
import { toManagedEntry } from './ledger-reads.js';
import { firstEntryAtOrAfter, lastEntry, type LedgerView } from './ledger-views.js';
import { infoFromProto, type ManagedLedgerInfoModel } from './managed-ledger-info.js';
import type { ManagedLedgerMetadata } from './metadata-access.js';
import { ManagedLedgerReason } from './reasons.js';

/** Bounds of a read-only view, each in its unit. */
export interface ReadOnlyLedgerSettings {
  /** A reader waiting at the end re-reads the LAC from the ledger store after this long without a notification. */
  lacFallbackMs: number;
  /** ManagedLedgerInfo is re-read this often even when no notification came (rolled, trimmed, deleted). */
  metadataRefreshMs: number;
  /** Entries kept in memory for the view's readers (shared by every subscription of the topic). */
  entryCacheMaxBytes: number;
  /** Entries fetched per ledger-store read. */
  maxStoreReadEntries: number;
}

export const DEFAULT_READ_ONLY_LEDGER_SETTINGS: ReadOnlyLedgerSettings = {
  lacFallbackMs: 200,
  metadataRefreshMs: 5_000,
  entryCacheMaxBytes: 32 * 1024 * 1024,
  maxStoreReadEntries: 1_000,
};

export interface ReadOnlyManagedLedgerOptions {
  /** The writer topic whose managed ledger this view reads. */
  topic: string | TopicName;
  numberOfTopicBuckets?: number;
  ledgerStore: LedgerStore;
  /** Only ManagedLedgerInfo is read: over the metadata service's gRPC API in a cluster. */
  metadata: Pick<ManagedLedgerMetadata, 'getManagedLedgerInfo'>;
  bus?: Bus;
  settings?: Partial<ReadOnlyLedgerSettings>;
  logger?: { warn(details: object, message: string): void };
  /** Told, per LAC notification that carries the writer's confirmation time, how long it took to arrive (ms). */
  observeLacPropagationMs?: (ms: number) => void;
}

/** How much the view has learned from each source: what the tests and metrics look at. */
export interface ReadOnlyLedgerStats {
  lacNotifications: number;
  lacFallbackReads: number;
  metadataReads: number;
}

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
 */
export class ReadOnlyManagedLedger {
  readonly topic: string;
  readonly path: string;
  readonly name: string;
  private info: ManagedLedgerInfoModel;
  private infoVersion: number;
  /** The last-add-confirmed of each ledger not yet closed in ManagedLedgerInfo. */
  private readonly lacs = new Map<number, number>();
  private readonly lacSubscriptions = new Map<number, BusSubscription>();
  private readonly cache: EntryCache;
  private readonly waiters = new Set<() => void>();
  private readonly deletedListeners = new Set<(error: LedgerlineError) => void>();
  private readonly settings: ReadOnlyLedgerSettings;
  private fallbackTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private readonly infoSubscriptions: BusSubscription[] = [];
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
    this.cache = new EntryCache(this.settings.entryCacheMaxBytes);
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
    view.listen();
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
    const views = this.ledgers();
    const out: ManagedLedgerEntry[] = [];
    let next = firstEntryAtOrAfter(views, from);
    while (next !== undefined && out.length < maxEntries) {
      const ledgerId = next.ledgerId;
      const view = views.find((v) => v.ledgerId === ledgerId) as LedgerView;
      const last = Math.min(view.entries - 1, next.entryId + (maxEntries - out.length) - 1);
      const read = await this.readRange(view, next.entryId, last);
      out.push(...read);
      // Fewer than asked: the store has not confirmed the rest yet, and nothing after it may be read before it.
      if (read.length < last - next.entryId + 1) break;
      next = firstEntryAtOrAfter(views, { ledgerId, entryId: last + 1 });
    }
    return out;
  }

  /** Entries first..last of one ledger: from the cache where it has them, else from the store in pages. */
  private async readRange(view: LedgerView, first: number, last: number): Promise<ManagedLedgerEntry[]> {
    const out: ManagedLedgerEntry[] = [];
    for (let entryId = first; entryId <= last;) {
      const cached = this.cache.get({ ledgerId: view.ledgerId, entryId });
      if (cached !== undefined) {
        out.push(cached);
        entryId++;
        continue;
      }
      const pageLast = Math.min(last, entryId + this.settings.maxStoreReadEntries - 1);
      const previous =
        entryId === 0
          ? view.firstOffset - 1
          : this.cache.get({ ledgerId: view.ledgerId, entryId: entryId - 1 })?.lastOffset;
      // An entry's first offset is the previous entry's index + 1: read that entry too when it is not known.
      const from = previous === undefined ? entryId - 1 : entryId;
      const stored = await this.readConfirmed(view.ledgerId, from, pageLast);
      if (stored === undefined) return out;
      let lastOffset = previous;
      for (const raw of stored) {
        const entry = toManagedEntry(view.ledgerId, raw, lastOffset);
        lastOffset = entry.lastOffset;
        if (raw.entryId < entryId) continue;
        this.cache.put(entry);
        out.push(entry);
      }
      entryId = pageLast + 1;
    }
    return out;
  }

  /**
   * Entries from..last of a ledger, or what the store has confirmed of them: a
   * LAC learned from a notification or from the writer is a hint, the store is
   * the truth. When the store refuses entries past its LAC, the view takes the
   * store's LAC for the ledger and reads up to it; undefined when even `from`
   * is not confirmed yet (the reader then waits, as at the end of the log).
   */
  private async readConfirmed(ledgerId: number, from: number, last: number) {
    try {
      return await this.options.ledgerStore.read(ledgerId, from, last);
    } catch (error) {
      if (!(error instanceof LedgerlineError) || error.reason !== LedgerStoreReason.ENTRY_NOT_CONFIRMED) throw error;
      const confirmed = (await this.options.ledgerStore.info(ledgerId))?.lastAddConfirmed ?? -1;
      if (this.lacs.has(ledgerId) && confirmed < this.lacs.get(ledgerId)!) this.lacs.set(ledgerId, confirmed);
      this.warn(error);
      if (confirmed < from) return undefined;
      return this.options.ledgerStore.read(ledgerId, from, Math.min(last, confirmed));
    }
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
    for (const subscription of this.infoSubscriptions) subscription.unsubscribe();
    for (const subscription of this.lacSubscriptions.values()) subscription.unsubscribe();
    this.lacSubscriptions.clear();
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
      this.listenLac(ledger.ledgerId);
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
    this.lacSubscriptions.get(ledgerId)?.unsubscribe();
    this.lacSubscriptions.delete(ledgerId);
  }

  private listen(): void {
    const bus = this.options.bus;
    if (bus === undefined) return;
    const refresh = (): void => {
      this.refreshInfo().catch((error: unknown) => this.warn(error));
    };
    // The writer's own hint (rolled, trimmed) and the metadata service's change of the node (deleted, terminated).
    const fromWriter = bus.subscribe(managedLedgerSubject(this.name));
    const fromMetadata = bus.subscribe(metadataChangedSubject(this.path));
    this.infoSubscriptions.push(fromWriter, fromMetadata);
    this.consume(fromWriter, (data) => {
      if (decodeManagedLedgerNotification(data).version > this.infoVersion) refresh();
    });
    this.consume(fromMetadata, refresh);
  }

  private listenLac(ledgerId: number): void {
    const bus = this.options.bus;
    if (bus === undefined || this.lacSubscriptions.has(ledgerId) || this.closed) return;
    const subscription = bus.subscribe(ledgerLacSubject(ledgerId));
    this.lacSubscriptions.set(ledgerId, subscription);
    this.consume(subscription, (data) => {
      const notification = decodeLacAdvanced(data);
      this.stats.lacNotifications++;
      if (notification.confirmedAtMs !== undefined)
        this.options.observeLacPropagationMs?.(Math.max(0, Date.now() - notification.confirmedAtMs));
      this.learnLac(notification.ledgerId, notification.lac);
    });
  }

  /** Runs `handle` for each message until the subscription ends; a malformed notification is logged, not fatal. */
  private consume(subscription: BusSubscription, handle: (data: Uint8Array) => void): void {
    void (async () => {
      for await (const message of subscription) {
        try {
          handle(message.data);
        } catch (error) {
          this.warn(error);
        }
      }
    })().catch((error: unknown) => this.warn(error));
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
