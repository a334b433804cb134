import type { Versioned } from '@ledgerline/metadata-store';
import { createCursorState, encodeCursorState, comparePositions, type Position } from '@ledgerline/cursor-codec';
import { invalidArgument, LedgerlineError } from '@ledgerline/errors';
import { validateCursorName } from '../metadata/cursor-name.js';
import {
  CursorInfoKeeper,
  cursorInfoFromProto,
  cursorInfoToProto,
  NO_CURSOR_LEDGER,
  type CursorInfoModel,
} from './cursor-info.js';
import { restoreBatchSizes } from './batch-sizes.js';
import { CursorPersistence } from './cursor-persistence.js';
import { recoverCursorState } from './cursor-recovery.js';
import { isBadVersion, ManagedLedgerReason } from '../errors.js';
import { canonicalMarkDelete, lastEntry } from '../ledgers/ledger-views.js';
import type { CursorHost } from './cursor-host.js';
import type { SeekTarget } from '../ledgers/position-lookup.js';
import pMap from 'p-map';
import { ManagedCursor } from './managed-cursor.js';
import type { ManagedCursorInfo } from '@ledgerline/proto';
import type { ManagedLedgerMetadata } from '../metadata/metadata-access.js';
import { checkPosition } from '../position.js';

/** Where a new cursor starts. */
export type CursorStart = { initialPosition: 'earliest' | 'latest' } | { position: Position } | { offset: number };

export interface OpenCursorOptions {
  /** Where a cursor that does not exist yet starts; latest when omitted (Pulsar's default). */
  start?: CursorStart;
  properties?: Map<string, bigint | number>;
  cursorProperties?: Map<string, string>;
}

/**
 * The cursors of one managed ledger: created, recovered (all of them when
 * the managed ledger opens, as Pulsar does, so trimming knows the slowest),
 * and deleted. Opening the same name twice at once yields one cursor.
 */
export class CursorRegistry {
  private readonly cursors = new Map<string, ManagedCursor>();
  private readonly opening = new Map<string, Promise<ManagedCursor>>();

  constructor(private readonly host: CursorHost) {}

  get size(): number {
    return this.cursors.size;
  }

  get(name: string): ManagedCursor | undefined {
    return this.cursors.get(name);
  }

  all(): ManagedCursor[] {
    return [...this.cursors.values()];
  }

  /**
   * The cursors' nodes as this owner last wrote them, with their versions (a transfer's hand-over state);
   * undefined when one has no version to hand over, since a state that left a cursor out would lose it, or
   * when a write's answer was lost, since the next owner takes the nodes handed over as they are stored.
   */
  storedNodes(): StoredCursor[] | undefined {
    const nodes: StoredCursor[] = [];
    for (const cursor of this.all()) {
      const { keeper } = cursor.persistence;
      const version = keeper.currentVersion;
      if (version === 'absent' || !keeper.certain) return undefined;
      nodes.push({ name: cursor.name, node: { value: cursorInfoToProto(keeper.current), version } });
    }
    return nodes;
  }

  /** The slowest mark-delete position; undefined without cursors. */
  slowestMarkDelete(): Position | undefined {
    let slowest: Position | undefined;
    for (const cursor of this.cursors.values()) {
      if (slowest === undefined || comparePositions(cursor.markDeletePosition, slowest) < 0)
        slowest = cursor.markDeletePosition;
    }
    return slowest;
  }

  open(name: string, options: OpenCursorOptions = {}): Promise<ManagedCursor> {
    validateCursorName(name);
    return this.openOnce(name, options);
  }

  /** The cursor, opened once however many ask at a time; `read` is its node when already read (recovery). */
  private openOnce(name: string, options: OpenCursorOptions, read?: StoredCursor): Promise<ManagedCursor> {
    const existing = this.cursors.get(name);
    if (existing?.state === 'deleted') return Promise.reject(beingDeleted(name));
    if (existing !== undefined) return Promise.resolve(existing);
    let pending = this.opening.get(name);
    if (pending === undefined) {
      pending = this.openOrCreate(name, options, read).finally(() => this.opening.delete(name));
      this.opening.set(name, pending);
    }
    return pending;
  }

  /**
   * Recovers every stored cursor, a few at a time, from their nodes as
   * `stored` read them: each is claimed by compare-and-set on the version
   * read, so a node that changed since is read again (openOrCreate).
   */
  async recoverAll(stored: Promise<StoredCursor[]>): Promise<void> {
    await pMap(await stored, (each) => this.openOnce(each.name, {}, each), {
      concurrency: this.host.ctx.config.cursorRecoveryConcurrency,
    });
  }

  /**
   * Deletes a cursor: its node goes first (by compare-and-set, so an owner
   * that lost the topic cannot delete the cursor its successor serves), then
   * its ledgers are marked deletable, so no marker names a ledger a node uses.
   */
  async delete(name: string): Promise<void> {
    const cursor = this.cursors.get(name) ?? (await this.open(name).catch(() => undefined));
    if (cursor === undefined) return;
    cursor.discard('deleted');
    const { ctx } = this.host;
    try {
      await cursor.deleteNode();
    } catch (err) {
      if (isBadVersion(err)) {
        this.cursors.delete(name);
        this.host.cursorFenced(LedgerlineError.from(err));
      }
      // Otherwise the node may still be there: the cursor stays registered, so trimming keeps what it has not
      // consumed (the subscription comes back after a restart), until deleting it again succeeds.
      throw err;
    }
    this.cursors.delete(name);
    const nowMs = ctx.now();
    await this.host.markDeletable(
      cursor
        .ledgersToRetire()
        .map((ledgerId) => ({ ledgerId, component: 'cursor' as const, cursorName: name, markedAtMs: nowMs })),
    );
    this.host.cursorMoved();
  }

  /** Every cursor ledger, for deleting the topic. */
  cursorLedgers(): { ledgerId: number; cursorName: string }[] {
    return this.all().flatMap((c) => c.ledgersToRetire().map((ledgerId) => ({ ledgerId, cursorName: c.name })));
  }

  async closeAll(): Promise<void> {
    const results = await Promise.allSettled(this.all().map((c) => c.close()));
    for (const result of results) {
      if (result.status === 'rejected') {
        this.host.ctx.logger.warn(
          { topic: this.host.ctx.topic, error: String(result.reason) },
          'a cursor failed to persist on close',
        );
      }
    }
  }

  discardAll(status: 'fenced' | 'deleted'): void {
    for (const cursor of this.cursors.values()) cursor.discard(status);
  }

  private async openOrCreate(name: string, options: OpenCursorOptions, read?: StoredCursor): Promise<ManagedCursor> {
    const { ctx } = this.host;
    for (let attempt = 0; attempt < 3; attempt++) {
      const stored = attempt === 0 && read !== undefined ? read.node : await ctx.metadata.getCursorInfo(ctx.path, name);
      const settled = attempt === 0 && read?.settled === true;
      const cursor =
        stored !== undefined
          ? await this.recover(name, stored, settled)
          : await this.create(name, options).catch(retryIfRaced);
      if (cursor !== undefined) {
        this.cursors.set(name, cursor);
        return cursor;
      }
    }
    throw new LedgerlineError(
      'ABORTED',
      ManagedLedgerReason.CURSOR_FENCED,
      `cursor ${name} keeps changing under this owner`,
    );
  }

  private async create(name: string, options: OpenCursorOptions): Promise<ManagedCursor> {
    const { ctx } = this.host;
    if (this.cursors.size >= ctx.config.maxCursors) throw tooManyCursors(ctx.config.maxCursors);
    const markDelete = await this.startingMarkDelete(options.start ?? { initialPosition: 'latest' });
    const state = createCursorState({
      markDelete,
      properties: new Map(options.properties ?? []),
      cursorProperties: new Map(options.cursorProperties ?? []),
    });
    const model: CursorInfoModel = {
      cursorsLedgerId: NO_CURSOR_LEDGER,
      markDelete,
      properties: state.properties,
      cursorProperties: state.cursorProperties,
      lastActiveMs: ctx.now(),
      inlineSnapshot: encodeCursorState(state),
      resetEpoch: 0,
    };
    const keeper = new CursorInfoKeeper(ctx.metadata, ctx.path, name, 'absent', model);
    await keeper.write(model);
    return new ManagedCursor(this.host, name, this.persistence(keeper), state, 0);
  }

  /** Recovers a stored cursor; undefined when its node changed meanwhile (the caller reads it again). */
  private async recover(
    name: string,
    stored: Versioned<ManagedCursorInfo>,
    settled: boolean,
  ): Promise<ManagedCursor | undefined> {
    const { ctx } = this.host;
    const node = cursorInfoFromProto(stored.value);
    const recovered = await recoverCursorState(ctx, name, node);
    await restoreBatchSizes(ctx, this.host.views(), recovered.state);
    const keeper = new CursorInfoKeeper(ctx.metadata, ctx.path, name, stored.version, node);
    // Claim the node: a previous owner still holding the cursor now fails its next compare-and-set. A settled
    // node has no such owner, and a write behind this owner's back still fails its first compare-and-set.
    if (!settled) {
      try {
        await keeper.write({ ...node, lastActiveMs: ctx.now() });
      } catch (err) {
        if (isBadVersion(err)) return undefined;
        throw err;
      }
    }
    return new ManagedCursor(this.host, name, this.persistence(keeper), recovered.state, node.resetEpoch);
  }

  private persistence(keeper: CursorInfoKeeper): CursorPersistence {
    return new CursorPersistence(this.host.ctx, keeper, (records) => this.host.markDeletable(records));
  }

  /** The mark-delete position a new cursor starts with: just before the first entry it should read. */
  private async startingMarkDelete(start: CursorStart): Promise<Position> {
    const views = this.host.views();
    checkStart(start);
    if ('initialPosition' in start) {
      const first = views[0];
      const last = views[views.length - 1];
      if (start.initialPosition === 'earliest' && first !== undefined)
        return canonicalMarkDelete(views, { ledgerId: first.ledgerId, entryId: -1 });
      return lastEntry(views) ?? { ledgerId: last?.ledgerId ?? 0, entryId: -1 };
    }
    const next = await this.host.resolveSeekTarget(
      'position' in start
        ? { position: checkPosition(start.position) }
        : ({ offset: start.offset } satisfies SeekTarget),
    );
    return canonicalMarkDelete(views, { ledgerId: next.ledgerId, entryId: next.entryId - 1 });
  }
}

function checkStart(start: CursorStart): void {
  const valid =
    typeof start === 'object' &&
    start !== null &&
    (('initialPosition' in start && (start.initialPosition === 'earliest' || start.initialPosition === 'latest')) ||
      'position' in start ||
      'offset' in start);
  if (!valid) {
    throw invalidArgument(
      ManagedLedgerReason.INVALID_CURSOR_START,
      "a cursor starts at {initialPosition: 'earliest' | 'latest'}, {position} or {offset}",
    );
  }
}

/** A create that lost to a concurrent create (the node now exists) is retried as an open. */
function retryIfRaced(err: unknown): undefined {
  if (isBadVersion(err)) return undefined;
  throw err;
}

function beingDeleted(name: string): LedgerlineError {
  return new LedgerlineError(
    'FAILED_PRECONDITION',
    ManagedLedgerReason.CURSOR_CLOSED,
    `cursor ${name} is being deleted (its node could not be removed yet): delete it again to finish`,
  );
}

function tooManyCursors(max: number): LedgerlineError {
  return new LedgerlineError(
    'RESOURCE_EXHAUSTED',
    ManagedLedgerReason.TOO_MANY_CURSORS,
    `a managed ledger holds at most ${max} cursors (maxCursors)`,
  );
}

/** A stored cursor's name and its node as read (undefined: gone since it was listed). */
export interface StoredCursor {
  name: string;
  node: Versioned<ManagedCursorInfo> | undefined;
  /**
   * The node is as its previous owner's clean close left it, and that owner
   * writes it no more: a hand-over whose ManagedLedgerInfo compare-and-set
   * held (hand-over-state.ts). Recovery then needs no claim of its own.
   */
  settled?: boolean;
}

/**
 * Lists a managed ledger's stored cursors and reads their nodes, at most
 * `concurrency` at once. A new owner does it while it claims the managed
 * ledger, rather than after: the two are independent, and the claim of each
 * cursor (by compare-and-set on the version read here) fences a previous
 * owner whatever it wrote meanwhile.
 */
export async function readStoredCursors(
  metadata: ManagedLedgerMetadata,
  path: string,
  limits: { maxCursors: number; concurrency: number },
): Promise<StoredCursor[]> {
  const names: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = await metadata.listCursors(path, pageToken === undefined ? {} : { pageToken });
    names.push(...page.names);
    pageToken = page.nextPageToken;
    if (names.length > limits.maxCursors) throw tooManyCursors(limits.maxCursors);
  } while (pageToken !== undefined);
  return pMap(names, async (name) => ({ name, node: await metadata.getCursorInfo(path, name) }), {
    concurrency: limits.concurrency,
  });
}
