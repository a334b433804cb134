import { LedgerlineError } from '@ledgerline/errors';
import type { ManagedLedgerConfigInput } from '../../config.js';
import { ManagedLedger } from '../../managed-ledger.js';
import type { LedgerFault } from '../fault-injecting-ledger-store.js';
import type { MetadataFault } from '../fault-injecting-metadata.js';
import type { OwnerProcess, RobustnessBackend } from './backend.js';
import type { Random } from './random.js';
import { within } from './waiting.js';

/** Attempts an owner makes to open the topic; faults are cleared after half of them. */
const OPEN_ATTEMPTS = 6;
/** How long any call of a live process may take before the history fails as hung. */
export const LIVENESS_MS = 20_000;

export interface Owner {
  name: string;
  proc: OwnerProcess;
  ml: ManagedLedger;
}

/** Ledger-store faults a history injects into an owner. */
export const LEDGER_FAULTS: readonly LedgerFault[] = [
  { call: 'append', mode: 'before', component: 'managed-ledger' },
  { call: 'append', mode: 'after', component: 'managed-ledger' },
  { call: 'fence', mode: 'before' },
  { call: 'closeLedger', mode: 'before' },
  { call: 'writerClose', mode: 'before' },
  { call: 'writerClose', mode: 'after' },
  { call: 'create', mode: 'before' },
  { call: 'read', mode: 'before' },
];

/** Metadata faults a history injects into an owner. */
export const METADATA_FAULTS: readonly MetadataFault[] = [
  { call: 'putManagedLedgerInfo', mode: 'before' },
  { call: 'putManagedLedgerInfo', mode: 'after' },
  { call: 'allocateLedgerId', mode: 'before' },
  { call: 'getManagedLedgerInfo', mode: 'before' },
];

/** Metadata faults that hit recovering cursors when a managed ledger opens. */
export const CURSOR_RECOVERY_FAULTS: readonly MetadataFault[] = [
  { call: 'listCursors', mode: 'before' },
  { call: 'getCursorInfo', mode: 'before' },
  { call: 'putCursorInfo', mode: 'before' },
  { call: 'putCursorInfo', mode: 'after' },
];

export function injectRandomFault(proc: OwnerProcess, rng: Random, metadataFaults = METADATA_FAULTS): void {
  if (rng.chance(0.6)) proc.ledgerStore.faults.push({ ...rng.pick(LEDGER_FAULTS) });
  else proc.metadata.faults.push({ ...rng.pick(metadataFaults) });
}

export function clearFaults(proc: OwnerProcess): void {
  proc.ledgerStore.faults.length = 0;
  proc.ledgerStore.appendFaults.length = 0;
  proc.metadata.faults.length = 0;
}

/**
 * Starts an owner process and opens the topic in it, as an owner service
 * retries after a store failure: only UNAVAILABLE may fail an attempt.
 * With `faults`, a few faults are injected into the open path first.
 */
export async function openOwner(
  backend: RobustnessBackend,
  name: string,
  topic: string,
  config: ManagedLedgerConfigInput,
  rng: Random,
  faults = 0,
  metadataFaults = METADATA_FAULTS,
): Promise<Owner> {
  const proc = backend.owner(name);
  for (let i = 0; i < faults; i++) injectRandomFault(proc, rng, metadataFaults);
  for (let attempt = 1; ; attempt++) {
    try {
      const ml = await within(ManagedLedger.open(topic, proc.deps, { config }), LIVENESS_MS, `open by ${name}`);
      return { name, proc, ml };
    } catch (err) {
      const error = LedgerlineError.from(err);
      if (error.code !== 'UNAVAILABLE' || attempt >= OPEN_ATTEMPTS) {
        throw new Error(`${name} could not open ${topic} (attempt ${attempt}): ${error.toString()}`, { cause: err });
      }
      if (attempt === OPEN_ATTEMPTS / 2) clearFaults(proc);
    }
  }
}

/** What a managed ledger logs when closing could not record its state. */
const CLOSED_UNRECORDED = [
  'closing the current ledger failed; the next owner recovers it',
  'a cursor failed to persist on close',
];

/**
 * The ledgers a process may have left behind legitimately when it crashed,
 * or closed without recording its state (both leave the rest to the next
 * owner and to the garbage collector's orphan sweep, which nothing here
 * runs): ledgers it created that no write it heard succeed named, and cursor
 * ledgers it was moving a cursor away from.
 */
export function crashLeftovers(owners: readonly Owner[]): Set<number> {
  const leftovers = new Set<number>();
  for (const owner of owners) {
    const closedUnrecorded = owner.proc.logger.lines.some((l) => CLOSED_UNRECORDED.includes(l.message));
    if (!owner.proc.process.crashed && !closedUnrecorded) continue;
    for (const ledgerId of owner.proc.ledgerStore.created.keys()) {
      if (!owner.proc.metadata.acknowledgedLedgerIds.has(ledgerId)) leftovers.add(ledgerId);
    }
    for (const ledgerId of owner.proc.metadata.switchedAwayLedgerIds) leftovers.add(ledgerId);
  }
  return leftovers;
}
