import type {
  CreateLedgerOptions,
  LedgerEntry,
  LedgerInfo,
  LedgerState,
  LedgerStore,
  LedgerWriter,
} from '@ledgerline/ledger-store';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import { LedgerStoreReason } from '@ledgerline/ledger-store';

interface StoredLedger {
  state: LedgerState;
  /** Set by a fence or a close from outside the writer; the writer's appends then fail LEDGER_FENCED. */
  fenced: boolean;
  entries: Uint8Array[];
  sizeBytes: number;
  ownerTags: Record<string, string>;
  createdAtMs: number;
}

/**
 * What an injected append fault does: 'before' fails without storing,
 * 'after' stores the entries and then reports a failure (the ambiguous case
 * of a timeout after the write landed).
 */
export type AppendFaultMode = 'before' | 'after';

const unavailable = (what: string) =>
  new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, `injected: ${what}`);

/**
 * A LedgerStore in memory with the real backends' semantics (open, fenced,
 * closed; LAC; fencing refuses every later append) plus fault injection and
 * call counters for this package's tests.
 */
export class InMemoryLedgerStore implements LedgerStore {
  private readonly ledgers = new Map<number, StoredLedger>();
  /** Faults consumed one per append call, in order. */
  readonly appendFaults: AppendFaultMode[] = [];
  /** Ledger creations to fail with UNAVAILABLE. */
  failCreates = 0;
  /** While true every call fails with UNAVAILABLE (a store outage). */
  down = false;
  /** Appends resolve after this many milliseconds (0: next macrotask), so calls overlap like on a network. */
  appendDelayMs = 0;
  readCalls = 0;
  /** Entries every read returned, summed: what a reader pulled from the store, needed or not. */
  entriesRead = 0;
  appendCalls = 0;

  async create(ledgerId: number, options: CreateLedgerOptions = {}): Promise<LedgerWriter> {
    this.checkUp('create');
    if (this.failCreates > 0) {
      this.failCreates--;
      throw unavailable('create failed');
    }
    if (this.ledgers.has(ledgerId)) {
      throw new LedgerlineError('ALREADY_EXISTS', LedgerStoreReason.LEDGER_EXISTS, `ledger ${ledgerId} exists`);
    }
    const ledger: StoredLedger = {
      state: 'open',
      fenced: false,
      entries: [],
      sizeBytes: 0,
      ownerTags: { ...(options.ownerTags ?? {}) },
      createdAtMs: Date.now(),
    };
    this.ledgers.set(ledgerId, ledger);
    return {
      ledgerId,
      append: (entries) => this.append(ledgerId, ledger, entries),
      close: async () => {
        this.checkUp('close');
        if (ledger.fenced) throw fenced(ledgerId);
        ledger.state = 'closed';
        return ledger.entries.length - 1;
      },
    };
  }

  private async append(ledgerId: number, ledger: StoredLedger, entries: Uint8Array[]): Promise<number> {
    this.appendCalls++;
    await new Promise((resolve) => setTimeout(resolve, this.appendDelayMs));
    this.checkUp('append');
    if (ledger.fenced || !this.ledgers.has(ledgerId)) throw fenced(ledgerId);
    if (ledger.state === 'closed') {
      throw new LedgerlineError('FAILED_PRECONDITION', LedgerStoreReason.LEDGER_CLOSED, `ledger ${ledgerId} is closed`);
    }
    const fault = this.appendFaults.shift();
    if (fault === 'before') throw unavailable('append failed before storing');
    const first = ledger.entries.length;
    for (const e of entries) {
      ledger.entries.push(e.slice());
      ledger.sizeBytes += e.byteLength;
    }
    if (fault === 'after') throw unavailable('append failed after storing');
    return first;
  }

  async fence(ledgerId: number): Promise<number> {
    const ledger = this.ledger(ledgerId, 'fence');
    if (ledger.state === 'open') {
      ledger.state = 'fenced';
      ledger.fenced = true;
    }
    return ledger.entries.length - 1;
  }

  async closeLedger(ledgerId: number): Promise<number> {
    const ledger = this.ledger(ledgerId, 'closeLedger');
    if (ledger.state !== 'closed') ledger.fenced = true;
    ledger.state = 'closed';
    return ledger.entries.length - 1;
  }

  async read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]> {
    this.readCalls++;
    const ledger = this.ledger(ledgerId, 'read');
    if (firstEntryId < 0 || lastEntryId < firstEntryId) {
      throw new LedgerlineError(
        'INVALID_ARGUMENT',
        LedgerStoreReason.BAD_ENTRY_RANGE,
        `bad range ${firstEntryId}..${lastEntryId}`,
      );
    }
    if (lastEntryId >= ledger.entries.length) {
      throw new LedgerlineError(
        'OUT_OF_RANGE',
        LedgerStoreReason.ENTRY_NOT_CONFIRMED,
        `entry ${lastEntryId} of ${ledgerId} past LAC`,
      );
    }
    const out: LedgerEntry[] = [];
    for (let id = firstEntryId; id <= lastEntryId; id++)
      out.push({ entryId: id, data: ledger.entries[id] as Uint8Array });
    this.entriesRead += out.length;
    return out;
  }

  async lastAddConfirmed(ledgerId: number): Promise<number> {
    return this.ledger(ledgerId, 'lastAddConfirmed').entries.length - 1;
  }

  async info(ledgerId: number): Promise<LedgerInfo | undefined> {
    this.checkUp('info');
    const ledger = this.ledgers.get(ledgerId);
    if (ledger === undefined) return undefined;
    return {
      ledgerId,
      state: ledger.state,
      lastAddConfirmed: ledger.entries.length - 1,
      sizeBytes: ledger.sizeBytes,
      ownerTags: { ...ledger.ownerTags },
      createdAtMs: ledger.createdAtMs,
    };
  }

  async delete(ledgerId: number): Promise<void> {
    this.checkUp('delete');
    this.ledgers.delete(ledgerId);
  }

  async list(options: { after?: number; limit?: number } = {}): Promise<{ ledgerIds: number[]; next?: number }> {
    this.checkUp('list');
    const ids = [...this.ledgers.keys()]
      .filter((id) => options.after === undefined || id > options.after)
      .sort((a, b) => a - b);
    const limit = options.limit ?? 1000;
    const page = ids.slice(0, limit);
    const last = page[page.length - 1];
    return ids.length > limit && last !== undefined ? { ledgerIds: page, next: last } : { ledgerIds: page };
  }

  async close(): Promise<void> {}

  /** Flips one byte of a stored entry (a disk or bit error), for corruption tests. */
  corruptEntry(ledgerId: number, entryId: number, byteIndex = -1): void {
    const data = this.ledgers.get(ledgerId)?.entries[entryId];
    if (data === undefined) throw new Error(`no entry ${ledgerId}:${entryId}`);
    const at = byteIndex < 0 ? data.length + byteIndex : byteIndex;
    data[at] = (data[at] as number) ^ 0xff;
  }

  /** How many entries a ledger holds, for assertions. */
  entryCount(ledgerId: number): number {
    return this.ledgers.get(ledgerId)?.entries.length ?? -1;
  }

  /** The ids of every stored ledger, for assertions. */
  ledgerIds(): number[] {
    return [...this.ledgers.keys()].sort((a, b) => a - b);
  }

  private ledger(ledgerId: number, what: string): StoredLedger {
    this.checkUp(what);
    const ledger = this.ledgers.get(ledgerId);
    if (ledger === undefined) {
      throw new LedgerlineError('NOT_FOUND', LedgerStoreReason.LEDGER_NOT_FOUND, `ledger ${ledgerId} does not exist`);
    }
    return ledger;
  }

  private checkUp(what: string): void {
    if (this.down) throw unavailable(`${what}: store down`);
  }
}

function fenced(ledgerId: number): LedgerlineError {
  return new LedgerlineError('ABORTED', LedgerStoreReason.LEDGER_FENCED, `ledger ${ledgerId} was fenced`);
}
