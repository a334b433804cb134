import { LedgerlineError } from '@ledgerline/errors';
import { taggedEntry } from './conformance-support.js';
import { LedgerStoreReason as R } from '../errors.js';
import type { LedgerStore, LedgerWriter } from '../store.js';

/*
 * A robustness workload for fencing (test code only): one writer appends from
 * several concurrent chains while something disturbs the store, another
 * client fences, and every call is recorded. `checkFencingHistory` then holds
 * the record against the model of a fenced ledger.
 */

/** One append call as its caller saw it. */
export interface AppendRecord {
  /** Issue order over all chains: the call order the writer promises to keep. */
  call: number;
  entries: Uint8Array[];
  /** The fence had returned before the call was issued. */
  issuedAfterFence: boolean;
  outcome: { ok: true; firstEntryId: number } | { ok: false; code: string; reason: string };
}

export interface FencingWorkload {
  writer: LedgerWriter;
  fencer: LedgerStore;
  ledgerId: number;
  chains: number;
  /** Bound on calls per chain, so a chain that is never fenced still ends. */
  maxCallsPerChain: number;
  /** Resolves when the fence may go (for example after some disturbances). */
  fenceWhen: () => Promise<void>;
}

export interface FencingHistory {
  records: AppendRecord[];
  /** What fence returned. */
  fencedLac: number;
  /** How many fence attempts failed UNAVAILABLE before one returned. */
  fenceRetries: number;
}

const MAX_FENCE_ATTEMPTS = 100;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs the chains and the fence; resolves when every chain was refused after the fence returned, or hit its bound. */
export async function runFencingWorkload(workload: FencingWorkload): Promise<FencingHistory> {
  const records: AppendRecord[] = [];
  let nextCall = 0;
  let fenceReturned = false;
  const chain = async (): Promise<void> => {
    for (let i = 0; i < workload.maxCallsPerChain; i++) {
      // A turn of the event loop between calls lets the chains, the fence and the disturbance interleave.
      await new Promise((resolve) => setImmediate(resolve));
      const call = nextCall++;
      const entries = Array.from({ length: 1 + (call % 3) }, (_, k) => taggedEntry(call, k, 64));
      const record: AppendRecord = {
        call,
        entries,
        issuedAfterFence: fenceReturned,
        outcome: { ok: false, code: '', reason: '' },
      };
      records.push(record);
      try {
        record.outcome = { ok: true, firstEntryId: await workload.writer.append(entries) };
      } catch (thrown) {
        const error = LedgerlineError.from(thrown);
        record.outcome = { ok: false, code: error.code, reason: error.reason };
        // A chain ends on a fenced call it made after the fence returned, so every chain makes one.
        if (error.reason === R.ledgerFenced && record.issuedAfterFence) return;
        // An ambiguous failure: go on with new entries, as a test of what the store keeps.
        await pause(2);
      }
    }
  };
  const fence = async (): Promise<[number, number]> => {
    await workload.fenceWhen();
    for (let attempt = 0; attempt < MAX_FENCE_ATTEMPTS; attempt++) {
      try {
        const lac = await workload.fencer.fence(workload.ledgerId);
        fenceReturned = true;
        return [lac, attempt];
      } catch (thrown) {
        // Fencing is idempotent, so an UNAVAILABLE fence is simply tried again.
        if (!LedgerlineError.is(thrown, R.storeUnavailable)) throw thrown;
        await pause(10);
      }
    }
    throw new Error(`no fence succeeded in ${MAX_FENCE_ATTEMPTS} attempts`);
  };
  const [[fencedLac, fenceRetries]] = await Promise.all([fence(), ...Array.from({ length: workload.chains }, chain)]);
  return { records, fencedLac, fenceRetries };
}

/**
 * The model of a fenced ledger, checked over a history and the ledger's
 * entries 0..LAC as stored afterwards. Returns the broken rules (empty when
 * the history is sound), so a failure names every problem at once.
 */
export function checkFencingHistory(
  history: FencingHistory,
  finalLac: number,
  stored: Uint8Array[],
): { problems: string[]; ambiguousStored: number } {
  const problems: string[] = [];
  const { records, fencedLac } = history;
  if (finalLac !== fencedLac) problems.push(`the LAC moved from ${fencedLac} at the fence to ${finalLac}`);
  if (stored.length !== finalLac + 1) problems.push(`read ${stored.length} entries for LAC ${finalLac}`);
  const acknowledged = records.filter((r) => r.outcome.ok);
  let lastFirst = -1;
  for (const record of acknowledged) {
    const first = (record.outcome as { firstEntryId: number }).firstEntryId;
    const last = first + record.entries.length - 1;
    if (record.issuedAfterFence) problems.push(`call ${record.call}, issued after the fence, was acknowledged`);
    if (last > fencedLac)
      problems.push(`call ${record.call} was acknowledged at ${first}..${last}, past the fenced LAC ${fencedLac}`);
    if (first <= lastFirst)
      problems.push(`call ${record.call} got id ${first}, not after an earlier call's ${lastFirst}`);
    lastFirst = first;
    record.entries.forEach((entry, k) => {
      const found = stored[first + k];
      if (found === undefined || Buffer.compare(Buffer.from(found), Buffer.from(entry)) !== 0) {
        problems.push(`acknowledged entry ${first + k} (call ${record.call}, #${k}) does not read back`);
      }
    });
  }
  const storedCalls = checkStoredCalls(records, stored);
  problems.push(...storedCalls.problems);
  const ambiguousStored = records.filter((r) => !r.outcome.ok && storedCalls.calls.has(r.call)).length;
  return { problems, ambiguousStored };
}

/** Every stored entry belongs to one call, each call's batch is stored whole, once, in order, and only if it may have been. */
function checkStoredCalls(records: AppendRecord[], stored: Uint8Array[]): { problems: string[]; calls: Set<number> } {
  const problems: string[] = [];
  const byCall = new Map(records.map((r) => [r.call, r]));
  const seenCalls = new Set<number>();
  let id = 0;
  while (id < stored.length && problems.length < 20) {
    const entry = stored[id]!;
    const view = new DataView(entry.buffer, entry.byteOffset, entry.byteLength);
    const call = entry.byteLength >= 8 ? view.getUint32(0) : -1;
    const record = byCall.get(call);
    if (record === undefined || view.getUint32(4) !== 0) {
      problems.push(`entry ${id} is not the start of any call's batch`);
      id++;
      continue;
    }
    if (seenCalls.has(call)) problems.push(`call ${call} is stored twice (again at ${id})`);
    seenCalls.add(call);
    // Only an acknowledged call or an ambiguous (UNAVAILABLE) one may have been stored.
    if (!record.outcome.ok && record.outcome.code !== 'UNAVAILABLE') {
      problems.push(`call ${call} failed ${record.outcome.reason}, yet its entries are stored at ${id}`);
    }
    record.entries.forEach((expected, k) => {
      const found = stored[id + k];
      if (found === undefined || Buffer.compare(Buffer.from(found), Buffer.from(expected)) !== 0) {
        problems.push(`call ${call} is not stored whole and in order from ${id}`);
      }
    });
    id += record.entries.length;
  }
  return { problems, calls: seenCalls };
}

/** Reads entries 0..lac in pieces no larger than `maxReadEntries`. */
export async function readAll(
  store: LedgerStore,
  ledgerId: number,
  lac: number,
  maxReadEntries: number,
): Promise<Uint8Array[]> {
  const all: Uint8Array[] = [];
  for (let first = 0; first <= lac; first += maxReadEntries) {
    const entries = await store.read(ledgerId, first, Math.min(lac, first + maxReadEntries - 1));
    all.push(...entries.map((e) => e.data));
  }
  return all;
}
