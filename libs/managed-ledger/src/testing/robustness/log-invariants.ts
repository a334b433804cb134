import { OwnerTag, type LedgerStore } from '@ledgerline/ledger-store';
import type { ManagedLedgerEntry } from '../../entry.js';
import type { ManagedLedger } from '../../managed-ledger.js';
import type { ManagedLedgerMetadata } from '../../metadata/metadata-access.js';
import { formatPosition } from '../../position.js';
import { textOf } from '../fixtures.js';
import type { AppendRecorder } from './append-recorder.js';

/** Pages a whole-log read takes at most. */
const MAX_READ_PAGES = 10_000;
/** Ledger-store listing pages a coverage check takes at most. */
const MAX_LIST_PAGES = 1_000;

/** Every entry the managed ledger serves, oldest first. */
export async function readWholeLog(ml: ManagedLedger): Promise<ManagedLedgerEntry[]> {
  const first = ml.ledgers()[0];
  if (first === undefined) return [];
  const out: ManagedLedgerEntry[] = [];
  let from = { ledgerId: first.ledgerId, entryId: 0 };
  for (let page = 0; page < MAX_READ_PAGES; page++) {
    const entries = await ml.readEntries(from, { maxEntries: 200 });
    const last = entries[entries.length - 1];
    if (last === undefined) return out;
    out.push(...entries);
    from = { ledgerId: last.position.ledgerId, entryId: last.position.entryId + 1 };
  }
  throw new Error(`the log did not end within ${MAX_READ_PAGES} pages`);
}

/**
 * The log against what clients saw: offsets contiguous from `firstOffset`,
 * every payload once, every acknowledged append at its acknowledged position
 * and offsets (unless its ledger was trimmed), no append that failed for
 * certain. Returns the violations found.
 */
export function checkLogAgainstClients(
  entries: readonly ManagedLedgerEntry[],
  recorder: AppendRecorder,
  options: { firstOffset: number; trimmedLedgers?: ReadonlySet<number> },
): string[] {
  const violations: string[] = [...recorder.violations];
  const seen = new Map<string, ManagedLedgerEntry>();
  let nextOffset = options.firstOffset;
  for (const entry of entries) {
    const payload = textOf(entry.payload);
    const where = `${payload} at ${formatPosition(entry.position)}`;
    if (entry.firstOffset !== nextOffset)
      violations.push(`${where} starts at offset ${entry.firstOffset}, expected ${nextOffset}`);
    nextOffset = entry.lastOffset + 1;
    if (seen.has(payload)) violations.push(`${where} is stored twice`);
    seen.set(payload, entry);
    const issued = recorder.issued.get(payload);
    if (issued === undefined) violations.push(`${where} was never appended`);
    else if (issued.numMessages !== entry.numMessages)
      violations.push(`${where} holds ${entry.numMessages} messages, not ${issued.numMessages}`);
    const failed = recorder.failed.get(payload);
    if (failed?.definite === true) violations.push(`${where} is stored, but its append failed with ${failed.reason}`);
  }
  for (const [payload, acked] of recorder.acknowledged) {
    const stored = seen.get(payload);
    if (stored === undefined) {
      if (options.trimmedLedgers?.has(acked.position.ledgerId) !== true) {
        violations.push(`${payload} was acknowledged at ${formatPosition(acked.position)} but is not in the log`);
      }
      continue;
    }
    const same =
      stored.position.ledgerId === acked.position.ledgerId &&
      stored.position.entryId === acked.position.entryId &&
      stored.firstOffset === acked.firstOffset &&
      stored.lastOffset === acked.lastOffset;
    if (!same) {
      violations.push(
        `${payload} was acknowledged at ${formatPosition(acked.position)} offsets ${acked.firstOffset}..${acked.lastOffset}, ` +
          `stored at ${formatPosition(stored.position)} offsets ${stored.firstOffset}..${stored.lastOffset}`,
      );
    }
  }
  return violations;
}

/** The managed ledger's own account of its end (last offset, last position, per-ledger counts) against the data. */
export function checkEnds(ml: ManagedLedger, entries: readonly ManagedLedgerEntry[]): string[] {
  const violations: string[] = [];
  const last = entries[entries.length - 1];
  const views = ml.ledgers();
  // With no entry left to read, the offsets end just before where the last ledger starts.
  const expectedLastOffset = last?.lastOffset ?? (views[views.length - 1]?.firstOffset ?? 0) - 1;
  if (ml.lastOffset !== expectedLastOffset) {
    violations.push(`lastOffset is ${ml.lastOffset}, the data ends at ${expectedLastOffset}`);
  }
  const lac = ml.lastConfirmedPosition();
  if (
    (lac === undefined) !== (last === undefined) ||
    (last !== undefined && formatPosition(lac!) !== formatPosition(last.position))
  ) {
    violations.push(
      `last confirmed position ${lac ? formatPosition(lac) : 'none'}, last entry ${last ? formatPosition(last.position) : 'none'}`,
    );
  }
  for (const view of views) {
    const mine = entries.filter((e) => e.position.ledgerId === view.ledgerId);
    const first = mine[0];
    const final = mine[mine.length - 1];
    if (mine.length !== view.entries)
      violations.push(`ledger ${view.ledgerId} says ${view.entries} entries, holds ${mine.length}`);
    if (first !== undefined && first.firstOffset !== view.firstOffset) {
      violations.push(
        `ledger ${view.ledgerId} says first offset ${view.firstOffset}, its first entry starts at ${first.firstOffset}`,
      );
    }
    if (final !== undefined && final.lastOffset !== view.lastOffset) {
      violations.push(
        `ledger ${view.ledgerId} says last offset ${view.lastOffset}, its last entry ends at ${final.lastOffset}`,
      );
    }
  }
  return violations;
}

/** What metadata references for one managed ledger, read from the source of truth. */
export interface MetadataReferences {
  ledgers: Set<number>;
  deletable: Set<number>;
  cursorLedgers: Map<string, number>;
}

export async function readReferences(metadata: ManagedLedgerMetadata, path: string): Promise<MetadataReferences> {
  const stored = await metadata.getManagedLedgerInfo(path);
  const ledgers = new Set((stored?.value.ledgerInfo ?? []).map((l) => Number(l.ledgerId)));
  const deletable = new Set((stored?.value.deletableLedgers ?? []).map((d) => Number(d.ledgerId)));
  const cursorLedgers = new Map<string, number>();
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const names = await metadata.listCursors(path, pageToken === undefined ? {} : { pageToken });
    for (const name of names.names) {
      const cursor = await metadata.getCursorInfo(path, name);
      const ledgerId = Number(cursor?.value.cursorsLedgerId ?? -1n);
      if (ledgerId >= 0) cursorLedgers.set(name, ledgerId);
    }
    pageToken = names.nextPageToken;
    if (pageToken === undefined) break;
  }
  return { ledgers, deletable, cursorLedgers };
}

/** The ids of every ledger in the store tagged with this managed ledger's path. */
export async function ledgersOwnedBy(store: LedgerStore, path: string): Promise<number[]> {
  const owned: number[] = [];
  let after: number | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listing = await store.list(after === undefined ? {} : { after });
    for (const ledgerId of listing.ledgerIds) {
      const info = await store.info(ledgerId);
      if (info?.ownerTags[OwnerTag.managedLedger] === path) owned.push(ledgerId);
    }
    if (listing.next === undefined) return owned;
    after = listing.next;
  }
  throw new Error(`the ledger listing did not end within ${MAX_LIST_PAGES} pages`);
}

/**
 * Nothing leaked and nothing live marked: every ledger the store holds for
 * this managed ledger is in its ledger list, its deletable set or a cursor
 * node (or in `exempt`: created by a process that died before any write
 * naming it was acknowledged); no referenced ledger is deletable or missing.
 */
export async function checkLedgerCoverage(
  store: LedgerStore,
  metadata: ManagedLedgerMetadata,
  path: string,
  exempt: ReadonlySet<number> = new Set(),
): Promise<string[]> {
  const violations: string[] = [];
  const refs = await readReferences(metadata, path);
  const owned = await ledgersOwnedBy(store, path);
  const cursorLedgerIds = new Set(refs.cursorLedgers.values());
  for (const ledgerId of owned) {
    const known = refs.ledgers.has(ledgerId) || refs.deletable.has(ledgerId) || cursorLedgerIds.has(ledgerId);
    if (!known && !exempt.has(ledgerId))
      violations.push(`ledger ${ledgerId} is in the store but no metadata names it (leaked)`);
  }
  const stored = new Set(owned);
  for (const ledgerId of refs.ledgers) {
    if (refs.deletable.has(ledgerId)) violations.push(`ledger ${ledgerId} is in the ledger list and marked deletable`);
    if (!stored.has(ledgerId)) violations.push(`ledger ${ledgerId} is in the ledger list but not in the store`);
  }
  for (const [cursor, ledgerId] of refs.cursorLedgers) {
    if (refs.deletable.has(ledgerId)) violations.push(`cursor ${cursor}'s ledger ${ledgerId} is marked deletable`);
    if (!stored.has(ledgerId)) violations.push(`cursor ${cursor}'s ledger ${ledgerId} is not in the store`);
  }
  return violations;
}

/**
 * findPosition and findPositionByTime against a scan of the log, for
 * `samples` offsets and times drawn by `pick`: the entry holding an offset
 * (and the offset's place in its batch), the first entry at or after a time,
 * each found with at most one storage read (`readCalls` counts them).
 */
export async function checkLookups(
  ml: ManagedLedger,
  entries: readonly ManagedLedgerEntry[],
  pick: (below: number) => number,
  samples: number,
  readCalls: () => number,
): Promise<string[]> {
  const violations: string[] = [];
  if (entries.length === 0) return violations;
  for (let i = 0; i < samples; i++) {
    const entry = entries[pick(entries.length)]!;
    const offset = entry.firstOffset + pick(entry.numMessages);
    const reads = readCalls();
    const found = await ml.findPosition(offset);
    if (readCalls() - reads > 1) violations.push(`findPosition(${offset}) took ${readCalls() - reads} storage reads`);
    const at = `${found.ledgerId}:${found.entryId}#${found.batchIndex}`;
    const expected = `${formatPosition(entry.position)}#${offset - entry.firstOffset}`;
    if (at !== expected) violations.push(`findPosition(${offset}) found ${at}, the message is at ${expected}`);
    const time = entry.brokerTimestampMs;
    const first = entries.find((e) => e.brokerTimestampMs >= time)!;
    const byTime = await ml.findPositionByTime(time);
    if (formatPosition(byTime) !== formatPosition(first.position)) {
      violations.push(
        `findPositionByTime(${time}) found ${formatPosition(byTime)}, the first entry at it is ${formatPosition(first.position)}`,
      );
    }
  }
  return violations;
}
