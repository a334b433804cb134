import type { LedgerStore, LedgerWriter } from '@ledgerline/ledger-store';
import { managedLedgerPath, MANAGED_LEDGERS_ROOT, TopicName } from '@ledgerline/naming';
import { decodeEntry, LedgerOffsetIndex, OffsetAssigner } from '@ledgerline/offset-index';
import { LedgerlineError } from '@ledgerline/errors';
import { resolveManagedLedgerConfig, type ManagedLedgerConfig, type ManagedLedgerConfigInput } from './config.js';
import type { LedgerContext, ManagedLedgerDependencies } from './context.js';
import { defaultManagedLedgerLogger } from './default-logger.js';
import { EntryCache } from './ledgers/entry-cache.js';
import { InfoKeeper } from './metadata/info-keeper.js';
import { managedLedgerMetrics } from './metrics.js';
import { OffsetTables } from './ledgers/offset-tables.js';
import { EntryOffsetTable } from './ledgers/entry-offset-table.js';
import { deletingError, isBadVersion, ManagedLedgerReason } from './errors.js';
import {
  createOwnedLedger,
  discardIfUnnamed,
  discardUnreferencedLedger,
  fenceAndClose,
} from './ledgers/ledger-factory.js';
import { applyLedgerSwitch, indexSpacing } from './ledgers/ledger-rollover.js';
import {
  emptyManagedLedgerInfo,
  infoFromProto,
  infoToProto,
  OWNER_EPOCH_PROPERTY,
  ownerEpoch,
  storedLastOffset,
  type LedgerSummary,
  type ManagedLedgerInfoModel,
} from '@ledgerline/ledger-info';
import type { ManagedLedgerMetadata } from './metadata/metadata-access.js';
import { OpenLedger, summarizeClosedLedger } from './ledgers/open-ledger.js';
import { readStoredCursors, type StoredCursor } from './cursors/cursor-registry.js';
import { LedgerStoreReason } from '@ledgerline/ledger-store';
import type { Versioned } from '@ledgerline/metadata-store';
import type { ManagedLedgerInfo } from '@ledgerline/proto';
import { usableHandOverState, type HandOverState } from './hand-over-state.js';

/** Entries per read while a recovered ledger is indexed. */
const RECOVERY_PAGE_ENTRIES = 256;

export interface ManagedLedgerOpenOptions {
  config?: ManagedLedgerConfigInput;
  /** The namespace's numberOfTopicBuckets (PIP-157); 1 when omitted. */
  numberOfTopicBuckets?: number;
  /** What the previous owner's close left (a transfer): the open starts from it rather than reading it. */
  handedOver?: HandOverState;
}

export interface OpenInputs {
  path: string;
  topic: string;
  config: ManagedLedgerConfig;
  store: LedgerStore;
  metadata: ManagedLedgerMetadata;
  assigner: OffsetAssigner;
  now: () => number;
}

export interface RecoveredManagedLedger {
  info: ManagedLedgerInfoModel;
  version: number;
  /** The new ledger to write to; undefined for a terminated managed ledger. */
  current: OpenLedger | undefined;
  /** Offsets of the ledger recovered from the previous owner, already in memory. */
  recoveredTables: Map<number, EntryOffsetTable>;
}

/**
 * Takes the topic's managed ledger over as its owner (see openAsOwner) and
 * builds the context its modules share. `onConflict` hears of a lost
 * compare-and-set on ManagedLedgerInfo: another owner took the topic.
 * The context's current ledger is undefined for a terminated managed ledger.
 * `storedCursors` are the cursor nodes as handed over, or read while the node
 * was claimed (not after: a transfer's load waits for every round trip in a row).
 */
export async function openOwnerContext(
  topic: string | TopicName,
  deps: ManagedLedgerDependencies,
  options: ManagedLedgerOpenOptions,
  onConflict: (err: Error) => void,
): Promise<{ ctx: LedgerContext; storedCursors: Promise<StoredCursor[]> }> {
  const config = resolveManagedLedgerConfig(options.config);
  const topicName = typeof topic === 'string' ? TopicName.parse(topic) : topic;
  const path = managedLedgerPath(topicName, options.numberOfTopicBuckets ?? 1);
  const now = deps.clock ?? Date.now;
  const assigner = new OffsetAssigner({
    maxPendingEntries: config.maxPendingAppends,
    maxAppendAttempts: config.writeRetryMaxAttempts,
  });
  const inputs = { path, topic: topicName.toString(), config, store: deps.ledgerStore, metadata: deps.metadata };
  const { recovered, storedCursors } = await recoverOwnership({ ...inputs, assigner, now }, options.handedOver);
  const ctx: LedgerContext = {
    path,
    name: path.slice(MANAGED_LEDGERS_ROOT.length + 1),
    topic: topicName.toString(),
    config,
    store: deps.ledgerStore,
    metadata: deps.metadata,
    bus: deps.bus,
    logger: deps.logger ?? defaultManagedLedgerLogger(),
    metrics: managedLedgerMetrics(deps.metricsRegistry),
    appendTrace: deps.appendTrace,
    now,
    keeper: new InfoKeeper(deps.metadata, path, recovered.info, recovered.version, onConflict),
    assigner,
    cache: new EntryCache(config.entryCacheMaxBytes),
    offsetTables: new OffsetTables(deps.ledgerStore, config.maxCachedOffsetTables),
    current: recovered.current,
    unrecordedLedgers: new Set(),
  };
  for (const [ledgerId, table] of recovered.recoveredTables) ctx.offsetTables.remember(ledgerId, table);
  return { ctx, storedCursors };
}

/**
 * openAsOwner, from the state the previous owner handed over when there is
 * one: the nodes are then not read, unless the state proves stale (its
 * ManagedLedgerInfo version was written since), when the open starts over
 * reading them. Without one, the cursor nodes are read while the node is
 * claimed.
 */
async function recoverOwnership(
  inputs: OpenInputs,
  handedOver: HandOverState | undefined,
): Promise<{ recovered: RecoveredManagedLedger; storedCursors: Promise<StoredCursor[]> }> {
  if (handedOver !== undefined && usableHandOverState(handedOver, inputs.config)) {
    try {
      const recovered = await openOnce(inputs, handedOver.info);
      // The compare-and-set held: no owner opened the managed ledger since the close, so no cursor node changed.
      const settled = handedOver.cursors.map((cursor) => ({ ...cursor, settled: true }));
      return { recovered, storedCursors: Promise.resolve(settled) };
    } catch (err) {
      if (!isBadVersion(err)) throw err;
    }
  }
  const storedCursors = readStoredCursors(inputs.metadata, inputs.path, {
    maxCursors: inputs.config.maxCursors,
    concurrency: inputs.config.cursorRecoveryConcurrency,
  });
  // Awaited once the node is claimed; a failure before then must not count as unhandled.
  storedCursors.catch(() => undefined);
  return { recovered: await openAsOwner(inputs), storedCursors };
}

/**
 * Opens a managed ledger as its new owner: loads (or creates) its node,
 * fences the previous owner's last ledger and closes it at its
 * last-add-confirmed, recovers the next offset from that ledger's entries,
 * opens a new ledger and records all of it in one compare-and-set. Another
 * owner changing the node meanwhile makes the attempt start over.
 */
export async function openAsOwner(inputs: OpenInputs): Promise<RecoveredManagedLedger> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await openOnce(inputs);
    } catch (err) {
      if (!isBadVersion(err) || attempt >= inputs.config.maxOpenAttempts) throw err;
    }
  }
}

/** One attempt of openAsOwner; `known` is the node as handed over (not read then). */
async function openOnce(inputs: OpenInputs, known?: Versioned<ManagedLedgerInfo>): Promise<RecoveredManagedLedger> {
  const { metadata, path } = inputs;
  // The next ledger depends on nothing the node holds: it is made while the
  // node is read and recovered, and discarded when it goes unused.
  const creating = settled(
    createOwnedLedger(metadata, inputs.store, { topic: inputs.topic, path, component: 'managed-ledger' }),
  );
  /** Whether the ledger made early was used or discarded already (else the finally discards it). */
  let earlyHandled = false;
  try {
    const node = await claimNode(metadata, path, known);
    const { info } = node;
    const recoveredTables = new Map<number, EntryOffsetTable>();
    const last = info.ledgers[info.ledgers.length - 1];
    let closed: LedgerSummary | undefined;
    if (last !== undefined && last.closedAtMs === undefined) {
      const recovered = await recoverLastLedger(inputs, last);
      closed = recovered.summary;
      recoveredTables.set(last.ledgerId, recovered.offsets);
    }
    const lastOffset = info.ledgers.reduce(
      (max, l) => Math.max(max, l.lastOffset ?? -1),
      Math.max(storedLastOffset(info), closed?.lastOffset ?? -1),
    );
    inputs.assigner.recover(undefined, { lastOffset });
    if (info.state === 'terminated') {
      applyLedgerSwitch(info, closed, undefined, lastOffset, inputs.now());
      const version = await metadata.putManagedLedgerInfo(path, infoToProto(info), node.version);
      return { info, version, current: undefined, recoveredTables };
    }
    const writer = await newestLedger(inputs, info, await creating.value());
    earlyHandled = true; // From here on the writer's own failure handling below deletes it when it goes unused.
    const current = new OpenLedger(writer, lastOffset + 1, inputs.now(), indexSpacing(inputs.config));
    applyLedgerSwitch(info, closed, current.openSummary(), lastOffset, inputs.now());
    try {
      const version = await metadata.putManagedLedgerInfo(path, infoToProto(info), node.version);
      return { info, version, current, recoveredTables };
    } catch (err) {
      if (isBadVersion(err)) discardUnreferencedLedger(inputs.store, writer.ledgerId);
      else await discardIfUnnamed(metadata, inputs.store, path, writer.ledgerId);
      throw err;
    }
  } finally {
    if (!earlyHandled) {
      const unused = await creating.outcome;
      if (unused !== undefined) discardUnreferencedLedger(inputs.store, unused.ledgerId);
    }
  }
}

/**
 * The ledger to write to: `early` (made while the node was read) unless the
 * previous owner recorded a newer ledger meanwhile, since ledger ids must rise
 * along the list (positions compare by them); then a new one, `early` deleted.
 */
async function newestLedger(
  inputs: OpenInputs,
  info: ManagedLedgerInfoModel,
  early: LedgerWriter,
): Promise<LedgerWriter> {
  const newest = info.ledgers.reduce((max, ledger) => Math.max(max, ledger.ledgerId), -1);
  if (early.ledgerId > newest) return early;
  discardUnreferencedLedger(inputs.store, early.ledgerId);
  return createOwnedLedger(inputs.metadata, inputs.store, {
    topic: inputs.topic,
    path: inputs.path,
    component: 'managed-ledger',
  });
}

/** A promise whose rejection is kept for `value()` rather than reported unhandled while nothing awaits it. */
function settled<T>(work: Promise<T>): { value(): Promise<T>; outcome: Promise<T | undefined> } {
  const outcome = work.then(
    (value) => value,
    () => undefined,
  );
  return { value: () => work, outcome };
}

/**
 * Reads the node as the new owner, with the owner epoch bumped: a value that
 * differs from the previous owner's, so it can never take ours for the
 * collector's change. When the previous owner's last ledger is still open,
 * the node is claimed first by a compare-and-set of that value: from then on
 * every write the previous owner makes fails, so it cannot record another
 * ledger while we recover its last one (without the claim, a live owner that
 * rolls over faster than recovery takes would win every compare-and-set and
 * the takeover would never finish). A node whose last ledger was closed (a
 * hand-over, or a clean unload) needs no claim: the one compare-and-set that
 * records the new ledger fences the previous owner as well. A new topic's
 * node is written by that compare-and-set too.
 */
async function claimNode(
  metadata: ManagedLedgerMetadata,
  path: string,
  known: Versioned<ManagedLedgerInfo> | undefined,
): Promise<{ info: ManagedLedgerInfoModel; version: number | 'absent' }> {
  const stored = known ?? (await metadata.getManagedLedgerInfo(path));
  if (stored === undefined) return { info: emptyManagedLedgerInfo(), version: 'absent' };
  const info = infoFromProto(stored.value);
  if (info.state === 'deleting') throw deletingError(path);
  info.properties.set(OWNER_EPOCH_PROPERTY, String(ownerEpoch(info.properties) + 1));
  const last = info.ledgers[info.ledgers.length - 1];
  if (last === undefined || last.closedAtMs !== undefined) return { info, version: stored.version };
  return { info, version: await metadata.putManagedLedgerInfo(path, infoToProto(info), stored.version) };
}

/**
 * Fences the previous owner's ledger, closes it at its last-add-confirmed and
 * indexes what it holds: the entries are read once, which also recovers the
 * last offset from the last entry (Pulsar reads only that one; we need the
 * sparse index of the ledger too, so lookups stay at one read).
 */
async function recoverLastLedger(
  inputs: OpenInputs,
  ledger: LedgerSummary,
): Promise<{ summary: LedgerSummary; offsets: EntryOffsetTable }> {
  const { store, config } = inputs;
  let lastAddConfirmed: number;
  try {
    lastAddConfirmed = await fenceAndClose(store, ledger.ledgerId);
  } catch (err) {
    // A ledger the metadata names but the store lost holds nothing we could serve.
    if (!LedgerlineError.is(err, LedgerStoreReason.LEDGER_NOT_FOUND)) throw err;
    lastAddConfirmed = -1;
  }
  const index = new LedgerOffsetIndex({ firstOffset: ledger.firstOffset, ...indexSpacing(config) });
  const offsets = new EntryOffsetTable(ledger.firstOffset);
  let sizeBytes = 0;
  for (let first = 0; first <= lastAddConfirmed; first += RECOVERY_PAGE_ENTRIES) {
    const last = Math.min(lastAddConfirmed, first + RECOVERY_PAGE_ENTRIES - 1);
    for (const entry of await store.read(ledger.ledgerId, first, last)) {
      const { metadata } = decodeEntry(entry.data);
      if (metadata?.index === undefined || metadata.brokerTimestamp === undefined) {
        throw new LedgerlineError(
          'DATA_LOSS',
          ManagedLedgerReason.ENTRY_METADATA_MISSING,
          `entry ${entry.entryId} of ledger ${ledger.ledgerId} has no broker entry metadata: its offsets are unknown`,
        );
      }
      index.append(metadata.index, metadata.brokerTimestamp, entry.data.byteLength, metadata.maxEventTimeMs);
      offsets.append(metadata.index);
      sizeBytes += entry.data.byteLength;
    }
  }
  const summary = summarizeClosedLedger(
    ledger.ledgerId,
    index,
    offsets,
    sizeBytes,
    inputs.now(),
    config.maxStoredEntryCountsBytes,
  );
  return { summary, offsets };
}
