import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import type { Position } from '@ledgerline/cursor-codec';
import { OwnerTag, type CreateLedgerOptions, type LedgerStore } from '@ledgerline/ledger-store';
import { pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import { ManagedLedger } from '@ledgerline/managed-ledger';
import {
  DeletableLedgerSchema,
  LedgerComponent,
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
} from '@ledgerline/proto';
import { GarbageCollector } from './collector.js';
import type { CollectorMetadata } from './collector-metadata.js';
import { InProcessCollectorMetadata } from './store-collector-metadata.js';
import { collectorFixture, TEST_COLLECTOR_CONFIG, type CollectorFixture } from './testing/collector-fixture.js';
import type { BatchFault } from './testing/failing-deletes.js';

/*
 * The batched deletion path under injected storage errors and crash points.
 * At every point the two-phase invariants must hold: no marker is removed
 * while its ledger still exists (nothing leaked), and no ledger the managed
 * ledger lists or a cursor keeps is deleted (nothing live deleted). After a
 * retry, or a restarted collector, every marked ledger and marker is gone.
 */

/** deleteConcurrency in these tests: ten marked ledgers make batches of 4, 4 and 2. */
const BATCH = 4;
const CONFIG = { ...TEST_COLLECTOR_CONFIG, deleteConcurrency: BATCH };
const ML_CONFIG = {
  maxEntriesPerLedger: 1,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
};

interface Topic {
  ml: ManagedLedger;
  path: string;
  marked: number[];
  /** Entries the cursor has not consumed: they must read back from the store throughout. */
  unconsumed: Position[];
}

/** One ledger per entry; the cursor consumes all but the last two, so the trim marks about ten ledgers. */
async function trimmedTopic(fixture: CollectorFixture, name: string, entries = 12): Promise<Topic> {
  const ml = await ManagedLedger.open(
    `persistent://acme/batches/${name}`,
    { ledgerStore: fixture.ledgerStore, metadata: fixture.mlMetadata },
    { config: ML_CONFIG },
  );
  const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
  const written: Position[] = [];
  for (let i = 0; i < entries; i++) written.push((await ml.append(new TextEncoder().encode(`${name} ${i}`))).position);
  cursor.ackCumulative(written[entries - 3]!);
  await ml.trim();
  const marked = ml.info().info.deletableLedgers.map((d) => Number(d.ledgerId));
  expect(marked.length).toBeGreaterThan(2 * BATCH);
  return { ml, path: ml.path, marked, unconsumed: written.slice(entries - 2) };
}

async function markersOf(fixture: CollectorFixture, path: string): Promise<number[]> {
  const node = await fixture.metadataStore.get(path);
  if (node === undefined) return [];
  return fromBinary(ManagedLedgerInfoSchema, node.value).deletableLedgers.map((d) => Number(d.ledgerId));
}

async function exists(store: LedgerStore, ledgerId: number): Promise<boolean> {
  return (await store.info(ledgerId)) !== undefined;
}

/** The invariants that hold at any moment, a crash included. */
async function expectInvariants(fixture: CollectorFixture, topic: Topic): Promise<void> {
  const markers = new Set(await markersOf(fixture, topic.path));
  const leaked: number[] = [];
  for (const ledgerId of topic.marked) {
    if (!markers.has(ledgerId) && (await exists(fixture.ledgerStore, ledgerId))) leaked.push(ledgerId);
  }
  expect(leaked).toEqual([]);
  const info = fromBinary(ManagedLedgerInfoSchema, (await fixture.metadataStore.get(topic.path))!.value);
  for (const ledger of info.ledgerInfo) expect(await exists(fixture.ledgerStore, Number(ledger.ledgerId))).toBe(true);
  const cursor = fromBinary(ManagedCursorInfoSchema, (await fixture.metadataStore.get(`${topic.path}/sub`))!.value);
  if (cursor.cursorsLedgerId > 0n) expect(await exists(fixture.ledgerStore, Number(cursor.cursorsLedgerId))).toBe(true);
  for (const position of topic.unconsumed) {
    expect(await fixture.ledgerStore.read(position.ledgerId, position.entryId, position.entryId)).toHaveLength(1);
  }
}

/** Converged: invariants, and no marked ledger, marker or index entry left. */
async function expectCollected(fixture: CollectorFixture, topic: Topic): Promise<void> {
  await expectInvariants(fixture, topic);
  expect(await markersOf(fixture, topic.path)).toEqual([]);
  for (const ledgerId of topic.marked) expect(await exists(fixture.ledgerStore, ledgerId)).toBe(false);
  expect(await fixture.metadataStore.get(pendingDeletionEntryPath(topic.path))).toBeUndefined();
}

describe('batched deletion of marked ledgers', () => {
  let fixture: CollectorFixture;
  beforeEach(() => {
    fixture = collectorFixture();
  });
  afterEach(async () => {
    await fixture.close();
  });

  /** random 0: a failed ledger is due again at once, so the next pass retries it. */
  const collector = () => fixture.collector({ config: CONFIG, random: () => 0 });

  /** A collector the test abandons at a crash point: never stopped, as its process would be gone. */
  function doomedCollector(metadata?: CollectorMetadata): GarbageCollector {
    const inProcess = new InProcessCollectorMetadata(fixture.metadataStore, (path, version) =>
      fixture.admin.finishTopicDeletion(path, version),
    );
    return new GarbageCollector({ metadata: metadata ?? inProcess, ledgerStore: fixture.ledgerStore, config: CONFIG });
  }

  it('sends batches of at most deleteConcurrency ledgers, one info and one delete call each', async () => {
    const topic = await trimmedTopic(fixture, 'bounded');
    const report = await collector().triggerPass();
    expect(report.ledgersDeleted).toBe(topic.marked.length);
    const sizes = fixture.ledgerStore.batchSizes;
    const batches = Math.ceil(topic.marked.length / BATCH);
    expect(sizes.filter((b) => b.call === 'infoMany')).toHaveLength(batches);
    expect(sizes.filter((b) => b.call === 'deleteMany')).toHaveLength(batches);
    expect(Math.max(...sizes.map((b) => b.size))).toBe(BATCH);
    expect(sizes.reduce((sum, b) => sum + b.size, 0)).toBe(2 * topic.marked.length);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  it('keeps every marker of a batch whose info call fails, deleting none of its ledgers', async () => {
    const topic = await trimmedTopic(fixture, 'info-fails');
    fixture.ledgerStore.batchFaults.push({ call: 'infoMany', atCall: 0, mode: 'fail' });
    const gc = collector();
    const first = await gc.triggerPass();
    const held = topic.marked.slice(0, BATCH);
    expect(first).toMatchObject({ failures: BATCH, ledgersDeleted: topic.marked.length - BATCH });
    expect((await markersOf(fixture, topic.path)).sort()).toEqual([...held].sort());
    for (const ledgerId of held) expect(await exists(fixture.ledgerStore, ledgerId)).toBe(true);
    await expectInvariants(fixture, topic);
    expect(gc.listPending(-1, 10).map((p) => p.lastError)).toEqual(held.map(() => expect.stringContaining('injected')));
    expect((await gc.triggerPass()).ledgersDeleted).toBe(BATCH);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  it('keeps every marker of a batch whose delete call is cut short, and the next pass finishes it', async () => {
    const topic = await trimmedTopic(fixture, 'delete-cut');
    fixture.ledgerStore.batchFaults.push({ call: 'deleteMany', atCall: 1, mode: 'cut', keep: 2 });
    const gc = collector();
    const first = await gc.triggerPass();
    const cut = topic.marked.slice(BATCH, 2 * BATCH);
    expect(first.failures).toBe(BATCH);
    expect((await markersOf(fixture, topic.path)).sort()).toEqual([...cut].sort());
    // Two of them are gone already, yet marked: retried, never leaked.
    expect(await Promise.all(cut.map((id) => exists(fixture.ledgerStore, id)))).toEqual([false, false, true, true]);
    await expectInvariants(fixture, topic);
    const second = await gc.triggerPass();
    expect(first.ledgersDeleted + second.ledgersDeleted).toBe(topic.marked.length);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  it('holds back only the ledgers that fail within a batch', async () => {
    const topic = await trimmedTopic(fixture, 'one-fails');
    const stuck = topic.marked[1]!;
    fixture.ledgerStore.failing.add(stuck);
    const gc = collector();
    const report = await gc.triggerPass();
    expect(report).toMatchObject({ failures: 1, ledgersDeleted: topic.marked.length - 1 });
    expect(await markersOf(fixture, topic.path)).toEqual([stuck]);
    expect(await exists(fixture.ledgerStore, stuck)).toBe(true);
    await expectInvariants(fixture, topic);
    fixture.ledgerStore.failing.clear();
    await gc.triggerPass();
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  const crashPoints: [string, BatchFault][] = [
    ['in the first info call', { call: 'infoMany', atCall: 0, mode: 'crash' }],
    ['in the first delete call, before anything landed', { call: 'deleteMany', atCall: 0, mode: 'crash', keep: 0 }],
    ['in the second delete call, after half of it landed', { call: 'deleteMany', atCall: 1, mode: 'crash', keep: 2 }],
    ['in the last delete call, after all of it landed', { call: 'deleteMany', atCall: 2, mode: 'crash', keep: BATCH }],
  ];
  it.each(crashPoints)('leaves only markers after a crash %s; a restarted collector finishes', async (_, fault) => {
    const topic = await trimmedTopic(fixture, 'crash');
    fixture.ledgerStore.batchFaults.push(fault);
    const crashed = new Promise<void>((resolve) => (fixture.ledgerStore.onCrash = resolve));
    // It never settles: its collector died at the crash point.
    doomedCollector()
      .triggerPass()
      .catch(() => undefined);
    await crashed;
    expect(await markersOf(fixture, topic.path)).toEqual(topic.marked);
    await expectInvariants(fixture, topic);
    const restarted = await collector().triggerPass();
    expect(restarted.ledgersDeleted).toBe(topic.marked.length);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  it('leaves only markers after a crash between the deletes and the marker compare-and-set', async () => {
    const topic = await trimmedTopic(fixture, 'crash-before-cas');
    const inner = new InProcessCollectorMetadata(fixture.metadataStore, (path, version) =>
      fixture.admin.finishTopicDeletion(path, version),
    );
    let crash!: () => void;
    const crashed = new Promise<void>((resolve) => (crash = resolve));
    const dying: CollectorMetadata = {
      get: (path) => inner.get(path),
      children: (path, after, limit) => inner.children(path, after, limit),
      delete: (path, expected) => inner.delete(path, expected),
      finishTopicDeletion: (path, expected) => inner.finishTopicDeletion(path, expected),
      put: (path, value, expected) => {
        if (path !== topic.path) return inner.put(path, value, expected);
        crash();
        return new Promise<never>(() => undefined);
      },
    };
    doomedCollector(dying)
      .triggerPass()
      .catch(() => undefined);
    await crashed;
    // Every ledger is gone and every marker still there: the restarted collector finds them gone and clears them.
    for (const ledgerId of topic.marked) expect(await exists(fixture.ledgerStore, ledgerId)).toBe(false);
    expect(await markersOf(fixture, topic.path)).toEqual(topic.marked);
    await expectInvariants(fixture, topic);
    expect((await collector().triggerPass()).ledgersDeleted).toBe(topic.marked.length);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });

  it('never deletes a referenced or foreign ledger batched with deletable ones', async () => {
    const topic = await trimmedTopic(fixture, 'mixed');
    await topic.ml.close();
    const foreign = 9_100_001;
    await fixture.ledgerStore.create(foreign, {
      ownerTags: {
        [OwnerTag.managedLedger]: '/managed-ledgers/acme/batches/persistent/other',
        [OwnerTag.component]: 'managed-ledger',
      },
    });
    const node = await fixture.metadataStore.get(topic.path);
    const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
    const listed = Number(info.ledgerInfo[0]!.ledgerId);
    // Interleaved with the deletable markers, so each lands in a batch with some of them.
    const extra = [listed, foreign].map((id) =>
      create(DeletableLedgerSchema, { ledgerId: BigInt(id), component: LedgerComponent.MANAGED_LEDGER }),
    );
    info.deletableLedgers.splice(1, 0, extra[0]!);
    info.deletableLedgers.splice(BATCH + 1, 0, extra[1]!);
    await fixture.metadataStore.put(topic.path, toBinary(ManagedLedgerInfoSchema, info), {
      expectedVersion: node!.version,
    });
    const report = await collector().triggerPass();
    expect(report).toMatchObject({
      ledgersDeleted: topic.marked.length,
      referencedMarkersDropped: 1,
      ownerTagMismatches: 1,
    });
    expect(await exists(fixture.ledgerStore, listed)).toBe(true);
    expect(await exists(fixture.ledgerStore, foreign)).toBe(true);
    expect(await markersOf(fixture, topic.path)).toEqual([foreign]);
    await expectInvariants(fixture, topic);
  });

  it('keeps within deleteConcurrency single calls on a store without batch forms', async () => {
    const topic = await trimmedTopic(fixture, 'single-calls');
    const store = new SingleCallsOnly(fixture.ledgerStore);
    const report = await fixture
      .collector({ config: CONFIG, ledgerStore: store as unknown as LedgerStore })
      .triggerPass();
    expect(report.ledgersDeleted).toBe(topic.marked.length);
    expect(store.mostInFlight).toBeGreaterThan(1);
    expect(store.mostInFlight).toBeLessThanOrEqual(BATCH);
    expect(fixture.ledgerStore.batchSizes).toEqual([]);
    await expectCollected(fixture, topic);
    await topic.ml.close();
  });
});

/** A wrapper without infoMany / deleteMany that counts its info and delete calls in flight. */
class SingleCallsOnly implements LedgerStore {
  mostInFlight = 0;
  private inFlight = 0;
  constructor(private readonly inner: LedgerStore) {}
  info(ledgerId: number) {
    return this.counted(() => this.inner.info(ledgerId));
  }
  delete(ledgerId: number) {
    return this.counted(() => this.inner.delete(ledgerId));
  }
  create = (ledgerId: number, options?: CreateLedgerOptions) => this.inner.create(ledgerId, options);
  fence = (ledgerId: number) => this.inner.fence(ledgerId);
  closeLedger = (ledgerId: number) => this.inner.closeLedger(ledgerId);
  read = (ledgerId: number, first: number, last: number) => this.inner.read(ledgerId, first, last);
  lastAddConfirmed = (ledgerId: number) => this.inner.lastAddConfirmed(ledgerId);
  list = (options?: { after?: number; limit?: number }) => this.inner.list(options);
  close = () => Promise.resolve();

  private async counted<T>(call: () => Promise<T>): Promise<T> {
    this.mostInFlight = Math.max(this.mostInFlight, ++this.inFlight);
    try {
      return await call();
    } finally {
      this.inFlight--;
    }
  }
}
