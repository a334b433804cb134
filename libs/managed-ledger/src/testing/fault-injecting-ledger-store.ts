import {
  OwnerTag,
  type CreateLedgerOptions,
  type LedgerEntry,
  type LedgerInfo,
  type LedgerStore,
  type LedgerWriter,
} from '@ledgerline/ledger-store';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import type { AppendFaultMode } from './in-memory-ledger-store.js';
import { SimulatedProcess } from './simulated-process.js';

/** The ledger-store calls a fault can hit; 'append' and 'writerClose' are the writer's. */
export type LedgerCall = 'create' | 'fence' | 'closeLedger' | 'read' | 'append' | 'writerClose';

/**
 * One injected failure, used by the first matching call:
 * - before: the call fails without reaching the store;
 * - after: the call takes effect, then reports failure (a lost reply, the
 *   ambiguous case of a timeout after the write landed);
 * - torn (append only): the first `keep` entries are stored, then the process
 *   crashes, as a writer that died between the chunks of a snapshot would;
 * - pass: no failure (with `until`, a gate that holds the call).
 */
export interface LedgerFault {
  call: LedgerCall;
  mode: 'before' | 'after' | 'torn' | 'pass';
  keep?: number;
  /** Only ledgers with this owner component ('managed-ledger' or 'cursor'); any ledger when omitted. */
  component?: string;
  /** Holds the call until this settles (called `reached` first), so a test can act while it waits. */
  until?: Promise<unknown>;
  reached?: () => void;
  /** Mode 'after': runs once the call took effect, before its failure is reported (e.g. kills the server). */
  tookEffect?: () => Promise<unknown>;
}

/**
 * Wraps any LedgerStore (the real SQLite or Redis ones included) as one
 * owner process sees it: faults on request (see LedgerFault; `appendFaults`
 * is the short form for appends), a process that can crash, and the ids of
 * the ledgers this process created.
 */
export class FaultInjectingLedgerStore implements LedgerStore {
  readonly appendFaults: AppendFaultMode[] = [];
  readonly faults: LedgerFault[] = [];
  /** Milliseconds each call of a kind waits before it reaches the store. */
  readonly delaysMs: Partial<Record<LedgerCall, number>> = {};
  /** Ledgers created through this wrapper, with their owner component. */
  readonly created = new Map<number, string>();
  readCalls = 0;

  constructor(
    private readonly inner: LedgerStore,
    readonly process: SimulatedProcess = new SimulatedProcess('default'),
  ) {}

  create(ledgerId: number, options?: CreateLedgerOptions): Promise<LedgerWriter> {
    const component = options?.ownerTags?.[OwnerTag.component] ?? '';
    const cursor = options?.ownerTags?.[OwnerTag.cursor];
    return this.call(
      'create',
      ledgerId,
      async () => {
        const writer = await this.inner.create(ledgerId, options);
        this.created.set(ledgerId, component);
        return this.wrapWriter(writer);
      },
      component,
      cursor === undefined ? '' : ` (cursor ${cursor})`,
    );
  }

  fence(ledgerId: number): Promise<number> {
    return this.call('fence', ledgerId, () => this.inner.fence(ledgerId));
  }
  closeLedger(ledgerId: number): Promise<number> {
    return this.call('closeLedger', ledgerId, () => this.inner.closeLedger(ledgerId));
  }
  read(ledgerId: number, firstEntryId: number, lastEntryId: number): Promise<LedgerEntry[]> {
    this.readCalls++;
    return this.call('read', ledgerId, () => this.inner.read(ledgerId, firstEntryId, lastEntryId));
  }
  lastAddConfirmed(ledgerId: number): Promise<number> {
    return this.process.run(() => this.inner.lastAddConfirmed(ledgerId));
  }
  info(ledgerId: number): Promise<LedgerInfo | undefined> {
    return this.process.run(() => this.inner.info(ledgerId));
  }
  delete(ledgerId: number): Promise<void> {
    return this.traced(`delete ${ledgerId}`, undefined, () => this.process.run(() => this.inner.delete(ledgerId)));
  }
  list(options?: { after?: number; limit?: number }): Promise<{ ledgerIds: number[]; next?: number }> {
    return this.process.run(() => this.inner.list(options));
  }
  /** The shared store outlives an owner process: closing the wrapper leaves it open. */
  async close(): Promise<void> {}

  private wrapWriter(writer: LedgerWriter): LedgerWriter {
    const ledgerId = writer.ledgerId;
    return {
      ledgerId,
      append: (entries) => this.append(writer, entries),
      close: () => this.call('writerClose', ledgerId, () => writer.close()),
    };
  }

  private append(writer: LedgerWriter, entries: Uint8Array[]): Promise<number> {
    return this.traced(`append ${writer.ledgerId} x${entries.length}`, undefined, () =>
      this.appendOnce(writer, entries),
    );
  }

  private appendOnce(writer: LedgerWriter, entries: Uint8Array[]): Promise<number> {
    const legacy = this.appendFaults.shift();
    if (legacy !== undefined) {
      return this.process.run(() => applyFault({ call: 'append', mode: legacy }, () => writer.append(entries)));
    }
    const fault = this.takeFault('append', writer.ledgerId);
    if (fault !== undefined) this.process.note(`append ${writer.ledgerId}: injecting ${fault.mode}`);
    if (fault?.mode === 'torn') {
      return this.process.run(async () => {
        const kept = entries.slice(0, Math.min(fault.keep ?? 0, entries.length - 1));
        if (kept.length > 0) await writer.append(kept);
        this.process.crash();
        return 0;
      });
    }
    return this.process.run(() => applyFault(fault, () => writer.append(entries)));
  }

  private async call<T>(
    call: LedgerCall,
    ledgerId: number,
    run: () => Promise<T>,
    component?: string,
    label = '',
  ): Promise<T> {
    const delayMs = this.delaysMs[call] ?? 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const fault = this.takeFault(call, ledgerId, component);
    return this.traced(`${call} ${ledgerId}${label}`, fault, () => this.process.run(() => applyFault(fault, run)));
  }

  private traced<T>(what: string, fault: LedgerFault | undefined, run: () => Promise<T>): Promise<T> {
    const label = fault === undefined ? what : `${what} [fault ${fault.mode}]`;
    return run().then(
      (value) => (this.process.note(`${label} -> ${typeof value === 'object' ? 'ok' : String(value)}`), value),
      (err: unknown) => (this.process.note(`${label} -> ${String(err)}`), Promise.reject(err)),
    );
  }

  /** Removes and returns the first fault for this call and ledger. */
  private takeFault(call: LedgerCall, ledgerId: number, component?: string): LedgerFault | undefined {
    const ledgerComponent = component ?? this.created.get(ledgerId);
    const index = this.faults.findIndex(
      (f) => f.call === call && (f.component === undefined || f.component === ledgerComponent),
    );
    return index < 0 ? undefined : this.faults.splice(index, 1)[0];
  }
}

async function applyFault<T>(fault: LedgerFault | undefined, run: () => Promise<T>): Promise<T> {
  fault?.reached?.();
  if (fault?.until !== undefined) await fault.until.catch(() => undefined);
  if (fault?.mode === 'before') throw injected(`${fault.call} failed before reaching the store`);
  const result = await run();
  if (fault?.mode === 'after') {
    await fault.tookEffect?.();
    throw injected(`${fault.call} took effect but its reply was lost`);
  }
  return result;
}

function injected(what: string): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, `injected: ${what}`);
}
