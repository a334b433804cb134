import { LedgerlineError } from '@ledgerline/errors';
import type { ExpectedVersion, MetadataStore, VersionedValue } from '@ledgerline/metadata-store';
import type { z } from 'zod';
import { isBadVersion } from './cas-retry.js';
import { SCAN_PAGE } from '../limits.js';
import { decodeRecord, encodeRecord } from './record-codec.js';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * A record read from the store: the stored node's version and times, with its
 * value decoded and checked against the record's schema.
 */
export interface VersionedRecord<T> extends Pick<VersionedValue, 'version' | 'createdAtMs' | 'modifiedAtMs'> {
  record: T;
}

export async function readRecord<T>(
  store: MetadataStore,
  path: string,
  schema: z.ZodType<T>,
): Promise<VersionedRecord<T> | undefined> {
  const node = await store.get(path);
  if (node === undefined) return undefined;
  return {
    record: decodeRecord(path, node.value, schema),
    version: node.version,
    createdAtMs: node.createdAtMs,
    modifiedAtMs: node.modifiedAtMs,
  };
}

export function writeRecord(
  store: MetadataStore,
  path: string,
  record: unknown,
  expectedVersion?: ExpectedVersion,
): Promise<number> {
  return store.put(path, encodeRecord(record), expectedVersion === undefined ? {} : { expectedVersion });
}

const EMPTY = new Uint8Array(0);

/** Creates an empty directory node unless it exists; concurrent creators all succeed. */
export async function ensureDirectory(store: MetadataStore, path: string): Promise<void> {
  try {
    await store.put(path, EMPTY, { expectedVersion: 'absent' });
  } catch (error) {
    if (!isBadVersion(error)) throw error;
  }
}

/** Deletes a node if it is still at `version`; a node that changed or vanished meanwhile is left alone. */
export async function deleteIfUnchanged(store: MetadataStore, path: string, version: number): Promise<boolean> {
  try {
    await store.delete(path, { expectedVersion: version });
    return true;
  } catch (error) {
    if (isBadVersion(error)) return false;
    throw error;
  }
}

/** True when a directory has at least one child. */
export async function hasChildren(store: MetadataStore, path: string): Promise<boolean> {
  const page = await store.children(path, { limit: 1 });
  return page.names.length > 0;
}

/**
 * Every child of a directory, up to `max` names (a caller's documented bound);
 * `truncated` says more exist.
 */
export async function listChildren(
  store: MetadataStore,
  path: string,
  max: number,
): Promise<{ names: string[]; truncated: boolean }> {
  const names: string[] = [];
  let after: string | undefined;
  while (names.length < max) {
    const page = await store.children(path, {
      limit: Math.min(SCAN_PAGE, max - names.length),
      ...(after === undefined ? {} : { after }),
    });
    names.push(...page.names);
    if (page.next === undefined || page.names.length === 0) return { names, truncated: false };
    assertAdvances(path, after, page.next);
    after = page.next;
  }
  const more = await store.children(path, { limit: 1, after: names[names.length - 1]! });
  return { names, truncated: more.names.length > 0 };
}

/** Calls `visit` for every child of a directory, page by page (for full scans: recounts and sweeps). */
export async function forEachChildPage(
  store: MetadataStore,
  path: string,
  visit: (names: string[]) => Promise<void> | void,
): Promise<void> {
  let after: string | undefined;
  for (;;) {
    const page = await store.children(path, { limit: SCAN_PAGE, ...(after === undefined ? {} : { after }) });
    if (page.names.length > 0) await visit(page.names);
    if (page.next === undefined || page.names.length === 0) return;
    assertAdvances(path, after, page.next);
    after = page.next;
  }
}

// A page token that does not move forward would loop forever: that is a store bug, so fail loudly.
function assertAdvances(path: string, after: string | undefined, next: string): void {
  if (after !== undefined && next <= after) {
    throw new LedgerlineError(
      'INTERNAL',
      MetadataServiceReason.STORE_PAGING_STUCK,
      `children of ${path} did not advance past ${after}`,
    );
  }
}
