import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { MetadataStore } from '@ledgerline/metadata-store';
import {
  encodePendingDeletionEntry,
  infoFromProto,
  infoToProto,
  markDeleting,
  pendingDeletionEntryPath,
} from '@ledgerline/ledger-info';
import {
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import { decodeLocalName } from '@ledgerline/naming';
import { LedgerlineError } from '@ledgerline/errors';
import { isBadVersion, retryOnConflict } from './cas-retry.js';
import { CREATE_CONCURRENCY } from '../limits.js';
import { forEachChildPage } from './store-records.js';
import pMap from 'p-map';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';

/**
 * The managed-ledger node of a topic holds Pulsar's ManagedLedgerInfo (proto2
 * bytes) at `managedLedgerPath(topic, numberOfTopicBuckets)`; its cursors, if
 * any, are its children, as in Pulsar.
 */
const NEW_TOPIC_INFO = toBinary(
  ManagedLedgerInfoSchema,
  create(ManagedLedgerInfoSchema, { state: ManagedLedgerState.ACTIVE }),
);

/** The ManagedLedgerInfo property holding a non-partitioned topic's id (admin/topic-ids.ts). */
export const TOPIC_ID_PROPERTY = 'ledgerline.topic.id';

function newTopicInfo(topicId: string | undefined): Uint8Array {
  if (topicId === undefined) return NEW_TOPIC_INFO;
  return toBinary(
    ManagedLedgerInfoSchema,
    create(ManagedLedgerInfoSchema, {
      state: ManagedLedgerState.ACTIVE,
      properties: [{ key: TOPIC_ID_PROPERTY, value: topicId }],
    }),
  );
}

export function decodeManagedLedgerInfo(path: string, bytes: Uint8Array): ManagedLedgerInfo {
  try {
    return fromBinary(ManagedLedgerInfoSchema, bytes);
  } catch (error) {
    throw new LedgerlineError(
      'INTERNAL',
      MetadataServiceReason.CORRUPT_METADATA,
      `ManagedLedgerInfo at ${path} does not decode`,
      {
        details: { path },
        cause: error,
      },
    );
  }
}

/**
 * Writes (or refreshes) the pending-deletions index entry of a managed ledger
 * (ledger-info's pending-deletions-index.ts). Every write that adds
 * deletable markers does this first, so the garbage collector finds every
 * marker without reading every topic; a crash in between leaves only a stale entry.
 */
export async function indexPendingDeletions(store: MetadataStore, managedLedgerPath: string): Promise<void> {
  const entry = encodePendingDeletionEntry({ managedLedgerPath, indexedAtMs: Date.now() });
  await store.put(pendingDeletionEntryPath(managedLedgerPath), entry);
}

export interface LiveManagedLedger {
  info: ManagedLedgerInfo;
  version: number;
  createdAtMs: number;
}

/** The node of a live topic; undefined when it does not exist or is being deleted. */
export async function readLiveManagedLedger(
  store: MetadataStore,
  path: string,
): Promise<LiveManagedLedger | undefined> {
  const node = await store.get(path);
  if (node === undefined) return undefined;
  const info = decodeManagedLedgerInfo(path, node.value);
  if (info.state === ManagedLedgerState.DELETING) return undefined;
  return { info, version: node.version, createdAtMs: node.createdAtMs };
}

/**
 * Writes the node of a new topic (with its id, for a topic that is not a
 * partition). A node left by a deleted topic whose ledgers
 * the garbage collector has not finished is taken over: it turns active again
 * with no ledgers and the new topic's id, keeping its deletable-ledger markers so none is leaked.
 */
export async function createManagedLedgerNode(
  store: MetadataStore,
  path: string,
  topicId?: string,
): Promise<'created' | 'revived' | 'exists'> {
  const fresh = newTopicInfo(topicId);
  try {
    await store.put(path, fresh, { expectedVersion: 'absent' });
    return 'created';
  } catch (error) {
    if (!isBadVersion(error)) throw error;
  }
  return retryOnConflict(`creating ${path}`, async (): Promise<'created' | 'revived' | 'exists'> => {
    const node = await store.get(path);
    if (node === undefined) {
      await store.put(path, fresh, { expectedVersion: 'absent' });
      return 'created';
    }
    const info = decodeManagedLedgerInfo(path, node.value);
    if (info.state !== ManagedLedgerState.DELETING) return 'exists';
    const revived = create(ManagedLedgerInfoSchema, {
      state: ManagedLedgerState.ACTIVE,
      deletableLedgers: info.deletableLedgers,
      properties: topicId === undefined ? [] : [{ key: TOPIC_ID_PROPERTY, value: topicId }],
    });
    if (info.deletableLedgers.length > 0) await indexPendingDeletions(store, path);
    await store.put(path, toBinary(ManagedLedgerInfoSchema, revived), { expectedVersion: node.version });
    await deleteCursorNodes(store, path);
    return 'revived';
  });
}

export interface CursorLedger {
  cursorName: string;
  ledgerId: bigint;
}

/** The cursor nodes under a managed-ledger node and the cursor ledgers they name. */
export async function readCursorLedgers(
  store: MetadataStore,
  path: string,
): Promise<{ names: string[]; ledgers: CursorLedger[] }> {
  const names: string[] = [];
  await forEachChildPage(store, path, (page) => {
    names.push(...page);
  });
  const ledgers: CursorLedger[] = [];
  await pMap(
    names,
    async (cursorName) => {
      const node = await store.get(`${path}/${cursorName}`);
      if (node === undefined) return;
      const cursor = decodeCursor(`${path}/${cursorName}`, node.value);
      // Ledger ids start at 1; -1 (or an unset 0) means the cursor's state lives in its node.
      if (cursor.cursorsLedgerId > 0n)
        ledgers.push({ cursorName: cursorNameOf(cursorName), ledgerId: cursor.cursorsLedgerId });
    },
    { concurrency: CREATE_CONCURRENCY },
  );
  return { names, ledgers };
}

/** Cursor nodes are named by the URL-encoded cursor name; a name that does not decode is kept as it is. */
function cursorNameOf(node: string): string {
  try {
    return decodeLocalName(node);
  } catch {
    return node;
  }
}

function decodeCursor(path: string, bytes: Uint8Array) {
  try {
    return fromBinary(ManagedCursorInfoSchema, bytes);
  } catch (error) {
    throw new LedgerlineError(
      'INTERNAL',
      MetadataServiceReason.CORRUPT_METADATA,
      `ManagedCursorInfo at ${path} does not decode`,
      {
        details: { path },
        cause: error,
      },
    );
  }
}

async function deleteCursorNodes(store: MetadataStore, path: string): Promise<void> {
  const { names } = await readCursorLedgers(store, path);
  await pMap(names, (name) => store.delete(`${path}/${name}`), { concurrency: CREATE_CONCURRENCY });
}

export type MarkResult = { outcome: 'missing' } | { outcome: 'deleted' | 'marked'; deletableLedgerIds: bigint[] };

/**
 * PIP-129 phase 1 for a whole topic. In ONE compare-and-set of the
 * ManagedLedgerInfo, the state becomes DELETING and every ledger (the topic's
 * and its cursors') moves to the deletable set; the node stays until the
 * garbage collector has deleted them. A topic that never had a ledger and
 * carries no markers is removed outright. `beforeMark` runs once before the
 * marking write (the caller records the deletion for listings there). Cursor
 * nodes go afterwards: their ledgers are already marked in the topic node.
 */
export async function markManagedLedgerDeleted(
  store: MetadataStore,
  path: string,
  nowMs: number,
  beforeMark: () => Promise<void>,
): Promise<MarkResult> {
  const cursors = await readCursorLedgers(store, path);
  let announced = false;
  const result = await retryOnConflict(`deleting ${path}`, async (): Promise<MarkResult> => {
    const node = await store.get(path);
    if (node === undefined) return { outcome: 'missing' };
    const info = decodeManagedLedgerInfo(path, node.value);
    if (info.state === ManagedLedgerState.DELETING) return { outcome: 'missing' };
    const current = infoFromProto(info);
    const marked = markDeleting(current, cursorLedgerRecords(cursors.ledgers), nowMs);
    const alreadyMarked = new Set(current.deletableLedgers.map((ledger) => ledger.ledgerId));
    const newlyMarked = marked.deletableLedgers.filter((ledger) => !alreadyMarked.has(ledger.ledgerId));
    if (marked.deletableLedgers.length === 0) {
      await store.delete(path, { expectedVersion: node.version });
      return { outcome: 'deleted', deletableLedgerIds: [] };
    }
    if (!announced) {
      announced = true;
      await beforeMark();
    }
    await indexPendingDeletions(store, path);
    await store.put(path, toBinary(ManagedLedgerInfoSchema, infoToProto(marked)), { expectedVersion: node.version });
    return { outcome: 'marked', deletableLedgerIds: newlyMarked.map((ledger) => BigInt(ledger.ledgerId)) };
  });
  if (result.outcome !== 'missing') {
    await pMap(cursors.names, (name) => store.delete(`${path}/${name}`), { concurrency: CREATE_CONCURRENCY });
  }
  return result;
}

function cursorLedgerRecords(cursors: readonly CursorLedger[]): { ledgerId: number; cursorName: string }[] {
  return cursors.map((cursor) => ({ ledgerId: Number(cursor.ledgerId), cursorName: cursor.cursorName }));
}
