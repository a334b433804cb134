import { LedgerlineError, type CodeName } from '@ledgerline/errors';
import type { LedgerStore, LedgerStoreOptions } from '../store.js';

/*
 * Helpers for the conformance suite (ledger-store.conformance.ts). Test code
 * only: nothing here is exported from the package index.
 */

/** A backend under test. Two opens of one namespace see the same ledgers, like two processes would. */
export interface ConformanceBackend {
  name: string;
  open(namespace: string, options?: LedgerStoreOptions): LedgerStore | Promise<LedgerStore>;
}

/** What each part of the conformance suite gets from it. */
export interface SuiteContext {
  /** A store over a namespace nobody else uses. */
  fresh(options?: LedgerStoreOptions): Promise<LedgerStore>;
  /** Two stores over one fresh namespace: a writer owner and a recovering owner. */
  pair(): Promise<[LedgerStore, LedgerStore]>;
}

/** Resolves when `promise` rejects with a LedgerlineError of this code and reason; fails the test otherwise. */
export async function expectFailure(
  promise: Promise<unknown>,
  code: CodeName,
  reason: string,
): Promise<LedgerlineError> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(LedgerlineError);
    const error = thrown as LedgerlineError;
    expect(`${error.code} ${error.reason}`).toBe(`${code} ${reason}`);
    return error;
  }
  throw new Error(`expected ${code} ${reason}, but the call resolved with ${JSON.stringify(outcome)}`);
}

/** An entry whose bytes say which call and position wrote it, so a read can be checked against the writes. */
export function taggedEntry(call: number, index: number, sizeBytes = 16): Uint8Array {
  const bytes = new Uint8Array(Math.max(sizeBytes, 8));
  const view = new DataView(bytes.buffer);
  view.setUint32(0, call);
  view.setUint32(4, index);
  for (let i = 8; i < bytes.length; i++) bytes[i] = (call * 31 + index * 7 + i) & 0xff;
  return bytes;
}

/** Every byte value once, in order. */
export function allByteValues(): Uint8Array {
  return Uint8Array.from({ length: 256 }, (_, i) => i);
}

/** Plain arrays of numbers compare clearly in Jest diffs, whatever view the bytes came in. */
export function bytesOf(data: Uint8Array): number[] {
  return Array.from(data);
}

/** A fresh namespace name per call, unique within the test run. */
export function namespaceFactory(label: string): () => string {
  let next = 0;
  const base = `${label}-${process.pid}-${Date.now().toString(36)}`;
  return () => `${base}-${next++}`;
}
