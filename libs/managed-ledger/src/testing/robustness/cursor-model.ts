import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import type { ExportedCursorState } from '../../cursors/managed-cursor.js';
import { formatPosition, positionKey } from '../../position.js';

/** One entry of the log as the cursor model sees it. */
export interface LogEntry {
  position: Position;
  numMessages: number;
}

/**
 * What a cursor consumed, entry by entry: entries consumed whole, and for
 * batch entries consumed in part, the message indexes acknowledged.
 */
export class ConsumedSet {
  readonly whole = new Set<string>();
  readonly indexes = new Map<string, Set<number>>();

  clone(): ConsumedSet {
    const copy = new ConsumedSet();
    for (const key of this.whole) copy.whole.add(key);
    for (const [key, set] of this.indexes) copy.indexes.set(key, new Set(set));
    return copy;
  }

  addWhole(p: Position): void {
    const key = positionKey(p);
    this.whole.add(key);
    this.indexes.delete(key);
  }

  /** Acknowledges message indexes of a batch entry; all of them make the entry whole. */
  addIndexes(entry: LogEntry, indexes: readonly number[]): void {
    const key = positionKey(entry.position);
    if (this.whole.has(key)) return;
    const set = this.indexes.get(key) ?? new Set<number>();
    for (const index of indexes) set.add(index);
    if (set.size >= entry.numMessages) this.addWhole(entry.position);
    else this.indexes.set(key, set);
  }

  /** Messages of `entry` this set has consumed. */
  messagesOf(entry: LogEntry): number {
    const key = positionKey(entry.position);
    return this.whole.has(key) ? entry.numMessages : (this.indexes.get(key)?.size ?? 0);
  }

  /** Everything up to and including the last entry consumed without a gap before it (the mark-delete). */
  markDeleteIndex(log: readonly LogEntry[]): number {
    let index = -1;
    while (index + 1 < log.length && this.whole.has(positionKey(log[index + 1]!.position))) index++;
    return index;
  }

  /** The consumed set a cursor's exported state describes, over the entries of `log`. */
  static fromExport(state: ExportedCursorState, log: readonly LogEntry[]): ConsumedSet {
    const set = new ConsumedSet();
    const acked = new Set<string>();
    for (const r of state.ackedRanges) {
      for (let entryId = r.firstEntryId; entryId <= r.lastEntryId; entryId++) {
        acked.add(positionKey({ ledgerId: r.ledgerId, entryId }));
      }
    }
    for (const entry of log) {
      const p = entry.position;
      if (comparePositions(p, state.markDelete) <= 0 || acked.has(positionKey(p))) set.addWhole(p);
    }
    const byKey = new Map(log.map((e) => [positionKey(e.position), e]));
    for (const batch of state.batchAcks) {
      const entry = byKey.get(positionKey(batch.position));
      if (entry !== undefined) set.addIndexes(entry, batch.ackedIndexes);
    }
    return set;
  }
}

/**
 * A recovered cursor against the truth: it consumed nothing no client
 * acknowledged (`truth` is every acknowledgement ever made), and lost nothing
 * a successful flush or close made durable (`durable`). Redelivery of what
 * was acknowledged after the last durable point is allowed.
 */
export function checkRecoveredCursor(
  name: string,
  log: readonly LogEntry[],
  recovered: ConsumedSet,
  truth: ConsumedSet,
  durable: ConsumedSet,
): string[] {
  const violations: string[] = [];
  for (const entry of log) {
    const where = `cursor ${name} entry ${formatPosition(entry.position)}`;
    const key = positionKey(entry.position);
    if (recovered.whole.has(key) && !truth.whole.has(key))
      violations.push(`${where} is consumed, but no client acknowledged all of it`);
    for (const index of recovered.indexes.get(key) ?? []) {
      if (!truth.whole.has(key) && truth.indexes.get(key)?.has(index) !== true) {
        violations.push(`${where} message ${index} is consumed, but no client acknowledged it`);
      }
    }
    if (recovered.messagesOf(entry) < durable.messagesOf(entry)) {
      violations.push(`${where} lost acknowledgements a successful flush had made durable`);
    }
  }
  const recoveredMarkDelete = recovered.markDeleteIndex(log);
  if (recoveredMarkDelete > truth.markDeleteIndex(log))
    violations.push(`cursor ${name} mark-delete passed the true mark-delete`);
  if (recoveredMarkDelete < durable.markDeleteIndex(log))
    violations.push(`cursor ${name} mark-delete fell below a durable one`);
  return violations;
}

/** The exact backlog of a consumed set: messages of the log it has not consumed. */
export function bruteForceBacklog(log: readonly LogEntry[], consumed: ConsumedSet): number {
  return log.reduce((sum, entry) => sum + entry.numMessages - consumed.messagesOf(entry), 0);
}
