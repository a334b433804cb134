import type { ExpectedVersion, Versioned } from '@ledgerline/metadata-store';
import type { ManagedCursorInfo, ManagedLedgerInfo } from '@ledgerline/proto';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';
import type { CursorNamePage, ManagedLedgerMetadata } from '../metadata/metadata-access.js';
import { SimulatedProcess } from './simulated-process.js';

export type MetadataCall =
  | 'getManagedLedgerInfo'
  | 'putManagedLedgerInfo'
  | 'getCursorInfo'
  | 'putCursorInfo'
  | 'deleteCursorInfo'
  | 'listCursors'
  | 'allocateLedgerId';

/**
 * One injected metadata failure, used by the first call of its kind:
 * 'before' fails without writing, 'after' writes and loses the reply, 'pass'
 * does not fail (with `until`, a gate that holds the call).
 */
export interface MetadataFault {
  call: MetadataCall;
  mode: 'before' | 'after' | 'pass';
  /** Holds the call until this settles (called `reached` first), so a test can act while it waits. */
  until?: Promise<unknown>;
  reached?: () => void;
}

/**
 * ManagedLedgerMetadata as one owner process sees it: faults on request,
 * delays per call, a process that can crash, and the ledger ids named by
 * every write this process was told succeeded (so a test can tell a ledger a
 * crash left unnamed from one the managed ledger leaked).
 */
export class FaultInjectingMetadata implements ManagedLedgerMetadata {
  readonly faults: MetadataFault[] = [];
  /** Milliseconds each call of a kind waits before it reaches the store. */
  readonly delaysMs: Partial<Record<MetadataCall, number>> = {};
  /** Ledger ids named by writes whose success this process heard. */
  readonly acknowledgedLedgerIds = new Set<number>();
  /** Cursor ledgers this process sent a write (or a delete) to stop naming. */
  readonly switchedAwayLedgerIds = new Set<number>();
  /** The cursor ledger each cursor node named when this process last read or wrote it. */
  private readonly cursorLedgers = new Map<string, number>();

  constructor(
    private readonly inner: ManagedLedgerMetadata,
    readonly process: SimulatedProcess = new SimulatedProcess('default'),
  ) {}

  getManagedLedgerInfo(path: string): Promise<Versioned<ManagedLedgerInfo> | undefined> {
    return this.call('getManagedLedgerInfo', () => this.inner.getManagedLedgerInfo(path));
  }

  async putManagedLedgerInfo(path: string, info: ManagedLedgerInfo, expected: ExpectedVersion): Promise<number> {
    const detail = `ledgers [${info.ledgerInfo.map((l) => l.ledgerId).join(' ')}] deletable [${info.deletableLedgers.map((d) => d.ledgerId).join(' ')}]`;
    const version = await this.call('putManagedLedgerInfo', detail, () =>
      this.inner.putManagedLedgerInfo(path, info, expected),
    );
    for (const l of info.ledgerInfo) this.acknowledgedLedgerIds.add(Number(l.ledgerId));
    for (const d of info.deletableLedgers) this.acknowledgedLedgerIds.add(Number(d.ledgerId));
    return version;
  }

  deleteManagedLedgerInfo(path: string, expectedVersion: number): Promise<void> {
    return this.process.run(() => this.inner.deleteManagedLedgerInfo(path, expectedVersion));
  }

  async getCursorInfo(path: string, cursorName: string): Promise<Versioned<ManagedCursorInfo> | undefined> {
    const stored = await this.call('getCursorInfo', () => this.inner.getCursorInfo(path, cursorName));
    if (stored !== undefined) this.cursorLedgers.set(cursorName, Number(stored.value.cursorsLedgerId));
    return stored;
  }

  async putCursorInfo(path: string, name: string, info: ManagedCursorInfo, expected: ExpectedVersion): Promise<number> {
    this.noteCursorLedger(name, Number(info.cursorsLedgerId));
    const detail = `${name} ledger ${info.cursorsLedgerId}`;
    const version = await this.call('putCursorInfo', detail, () =>
      this.inner.putCursorInfo(path, name, info, expected),
    );
    this.acknowledgedLedgerIds.add(Number(info.cursorsLedgerId));
    return version;
  }

  deleteCursorInfo(path: string, cursorName: string, expectedVersion?: number): Promise<void> {
    this.noteCursorLedger(cursorName, -1);
    return this.call('deleteCursorInfo', () => this.inner.deleteCursorInfo(path, cursorName, expectedVersion));
  }

  listCursors(path: string, options?: { pageToken?: string; limit?: number }): Promise<CursorNamePage> {
    return this.call('listCursors', () => this.inner.listCursors(path, options));
  }

  allocateLedgerId(): Promise<number> {
    return this.call('allocateLedgerId', () => this.inner.allocateLedgerId());
  }

  private noteCursorLedger(cursorName: string, ledgerId: number): void {
    const previous = this.cursorLedgers.get(cursorName);
    if (previous !== undefined && previous >= 0 && previous !== ledgerId) this.switchedAwayLedgerIds.add(previous);
    this.cursorLedgers.set(cursorName, ledgerId);
  }

  private async call<T>(
    call: MetadataCall,
    detailOrRun: string | (() => Promise<T>),
    maybeRun?: () => Promise<T>,
  ): Promise<T> {
    const detail = typeof detailOrRun === 'string' ? ` ${detailOrRun}` : '';
    const run = typeof detailOrRun === 'string' ? maybeRun! : detailOrRun;
    const delayMs = this.delaysMs[call] ?? 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const index = this.faults.findIndex((f) => f.call === call);
    const fault = index < 0 ? undefined : this.faults.splice(index, 1)[0];
    const label = fault === undefined ? `${call}${detail}` : `${call}${detail} [fault ${fault.mode}]`;
    fault?.reached?.();
    if (fault?.until !== undefined) await fault.until.catch(() => undefined);
    const result = this.process.run(async () => {
      if (fault?.mode === 'before') throw injected(`${call} failed before reaching the store`);
      const result = await run();
      if (fault?.mode === 'after') throw injected(`${call} took effect but its reply was lost`);
      return result;
    });
    return result.then(
      (value) => (this.process.note(`${label} -> ${typeof value === 'number' ? value : 'ok'}`), value),
      (err: unknown) => (this.process.note(`${label} -> ${String(err)}`), Promise.reject(err)),
    );
  }
}

function injected(what: string): LedgerlineError {
  return new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, `injected: ${what}`);
}
