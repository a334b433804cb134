import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { InProcessBus } from '@ledgerline/bus';
import { OwnerTag } from '@ledgerline/ledger-store';
import { pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import { ManagedLedger } from '@ledgerline/managed-ledger';
import {
  DeletableLedgerSchema,
  LedgerComponent,
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
} from '@ledgerline/proto';
import { LAST_FULL_SCAN_PATH } from './collector.js';
import { collectorFixture, TEST_COLLECTOR_CONFIG, type CollectorFixture } from './testing/collector-fixture.js';

const config = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
};

/** Polls a condition until it holds, for at most WAIT_TIMEOUT_MS. */
const WAIT_TIMEOUT_MS = 10_000;
async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${WAIT_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const payload = (text: string) => new TextEncoder().encode(text);

async function infoAt(fixture: CollectorFixture, path: string) {
  const node = await fixture.metadataStore.get(path);
  return node === undefined ? undefined : fromBinary(ManagedLedgerInfoSchema, node.value);
}

async function openWithTrimmed(fixture: CollectorFixture, topic: string, entries = 7, numberOfTopicBuckets = 1) {
  const ml = await ManagedLedger.open(
    topic,
    { ledgerStore: fixture.ledgerStore, metadata: fixture.mlMetadata },
    { config, numberOfTopicBuckets },
  );
  const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
  const written = [];
  for (let i = 0; i < entries; i++) written.push(await ml.append(payload(`${topic} ${i}`)));
  cursor.ackCumulative(written[entries - 2]!.position);
  await ml.trim();
  const marked = ml.info().info.deletableLedgers.map((d) => d.ledgerId);
  expect(marked.length).toBeGreaterThan(0);
  return { ml, cursor, written, marked };
}

describe('the garbage collector', () => {
  let fixture: CollectorFixture;
  beforeEach(() => {
    fixture = collectorFixture();
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('deletes trimmed ledgers, clears their markers and the index entry, while the owner keeps writing', async () => {
    const { ml, marked, written } = await openWithTrimmed(fixture, 'persistent://acme/gc/orders');
    const collector = fixture.collector();
    const report = await collector.triggerPass();
    expect(report.ledgersDeleted).toBe(marked.length);
    for (const ledgerId of marked) expect(await fixture.ledgerStore.info(ledgerId)).toBeUndefined();
    expect((await infoAt(fixture, ml.path))!.deletableLedgers).toEqual([]);
    expect(report.indexEntriesRemoved).toBe(1);
    expect(await fixture.metadataStore.get(pendingDeletionEntryPath(ml.path))).toBeUndefined();
    // The owner adopts the collector's change and goes on: what it still lists is readable.
    for (let i = 0; i < 4; i++) await ml.append(payload(`more ${i}`));
    expect(ml.state).toBe('open');
    const last = written[written.length - 1]!;
    const [entry] = await ml.readEntries(last.position, 1);
    expect(new TextDecoder().decode(entry!.payload).endsWith(`orders 6`)).toBe(true);
    expect(collector.status()).toMatchObject({ ledgersDeleted: marked.length, pendingDeletions: 0 });
    await ml.close();
  });

  it('is woken by a ledgers-deletable notification, long before its next pass', async () => {
    const bus = new InProcessBus();
    const collector = fixture.collector({ bus, config: { ...TEST_COLLECTOR_CONFIG, hintDelayMs: 0 } });
    await collector.start();
    // The pass start() runs at once; the next one is an hour away.
    await waitFor(async () => collector.status().passes === 1);
    const ml = await ManagedLedger.open(
      'persistent://acme/gc/hinted',
      { ledgerStore: fixture.ledgerStore, metadata: fixture.mlMetadata, bus },
      { config },
    );
    for (let i = 0; i < 5; i++) await ml.append(payload(`hinted ${i}`));
    await ml.trim();
    const marked = ml.info().info.deletableLedgers.map((d) => d.ledgerId);
    expect(marked.length).toBeGreaterThan(0);
    // A ledger leaves the store before the collector counts it: it counts once its marker is cleared, a metadata
    // write later. So the wait is for both, and what tells that no timed pass did the work is the pass count.
    await waitFor(
      async () =>
        collector.status().ledgersDeleted >= marked.length &&
        (await Promise.all(marked.map((id) => fixture.ledgerStore.info(id)))).every((i) => i === undefined),
    );
    expect(collector.status().passes).toBe(1);
    await ml.close();
    await bus.close();
  });

  it('retries failed deletes with backoff, showing attempts and the last error, until they succeed', async () => {
    const { ml, marked } = await openWithTrimmed(fixture, 'persistent://acme/gc/retry');
    const stuck = marked[0]!;
    fixture.ledgerStore.failing.add(stuck);
    const collector = fixture.collector();
    await collector.triggerPass();
    await collector.triggerPass();
    const [pending] = collector.listPending(-1, 10);
    expect(pending).toMatchObject({ ledgerId: stuck, managedLedgerPath: ml.path, component: 'managed-ledger' });
    expect(pending!.attempts).toBeGreaterThanOrEqual(1);
    expect(pending!.lastError).toContain('STORE_UNAVAILABLE');
    expect(collector.status().oldestPendingAgeMs).toBeGreaterThanOrEqual(0);
    expect((await infoAt(fixture, ml.path))!.deletableLedgers.map((d) => Number(d.ledgerId))).toEqual([stuck]);
    fixture.ledgerStore.failing.clear();
    await collector.triggerPass();
    expect(await fixture.ledgerStore.info(stuck)).toBeUndefined();
    expect(collector.listPending(-1, 10)).toEqual([]);
    expect(collector.status().failures).toBeGreaterThanOrEqual(1);
    await ml.close();
  });

  it('refuses a ledger whose owner tags name another managed ledger, and reports it', async () => {
    const { ml } = await openWithTrimmed(fixture, 'persistent://acme/gc/victim');
    const foreign = 9_000_001;
    await fixture.ledgerStore.create(foreign, {
      ownerTags: {
        [OwnerTag.managedLedger]: '/managed-ledgers/acme/gc/persistent/other',
        [OwnerTag.component]: 'managed-ledger',
      },
    });
    await ml.close();
    const node = await fixture.metadataStore.get(ml.path);
    const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
    info.deletableLedgers.push(
      create(DeletableLedgerSchema, { ledgerId: BigInt(foreign), component: LedgerComponent.MANAGED_LEDGER }),
    );
    await fixture.metadataStore.put(ml.path, toBinary(ManagedLedgerInfoSchema, info), {
      expectedVersion: node!.version,
    });
    const errors: string[] = [];
    const collector = fixture.collector({
      logger: { info() {}, warn() {}, error: (_details, message) => errors.push(message) },
    });
    const report = await collector.triggerPass();
    await collector.triggerPass();
    expect(report.ownerTagMismatches).toBe(1);
    expect(await fixture.ledgerStore.info(foreign)).toBeDefined();
    expect(collector.status().ownerTagMismatches).toBe(1);
    expect(collector.listPending(-1, 10)).toEqual([
      expect.objectContaining({ ledgerId: foreign, refusedReason: 'OWNER_TAG_MISMATCH' }),
    ]);
    expect(errors).toHaveLength(1);
    expect((await infoAt(fixture, ml.path))!.deletableLedgers.map((d) => Number(d.ledgerId))).toEqual([foreign]);
  });

  it('never deletes a marked ledger that is referenced again: drops the marker, keeps the ledger', async () => {
    const { ml } = await openWithTrimmed(fixture, 'persistent://acme/gc/again');
    await ml.close();
    const node = await fixture.metadataStore.get(ml.path);
    const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
    const listed = Number(info.ledgerInfo[0]!.ledgerId);
    info.deletableLedgers.push(
      create(DeletableLedgerSchema, { ledgerId: BigInt(listed), component: LedgerComponent.MANAGED_LEDGER }),
    );
    await fixture.metadataStore.put(ml.path, toBinary(ManagedLedgerInfoSchema, info), {
      expectedVersion: node!.version,
    });
    const report = await fixture.collector().triggerPass();
    expect(report.referencedMarkersDropped).toBe(1);
    expect(await fixture.ledgerStore.info(listed)).toBeDefined();
    expect((await infoAt(fixture, ml.path))!.deletableLedgers).toEqual([]);
  });

  it('finishes a topic deletion, and leaves a topic re-created with the same name alone', async () => {
    await fixture.admin.createTenant('acme');
    await fixture.admin.createNamespace('acme/gc', {});
    await fixture.admin.createTopic('persistent://acme/gc/gone');
    await fixture.admin.createTopic('persistent://acme/gc/back');
    const gone = await openWithTrimmed(fixture, 'persistent://acme/gc/gone');
    const back = await openWithTrimmed(fixture, 'persistent://acme/gc/back');
    await gone.ml.close();
    await back.ml.close();
    const goneLedgers = (await fixture.admin.deleteTopic('persistent://acme/gc/gone')).map(Number);
    const backLedgers = (await fixture.admin.deleteTopic('persistent://acme/gc/back')).map(Number);
    await fixture.admin.createTopic('persistent://acme/gc/back');
    const collector = fixture.collector();
    const report = await collector.triggerPass();
    expect(report.topicsFinished).toBe(1);
    expect(await fixture.metadataStore.get(gone.ml.path)).toBeUndefined();
    expect(await fixture.metadataStore.exists('/admin/deleting-topics/acme/gc/gone')).toBe(false);
    for (const ledgerId of [...goneLedgers, ...backLedgers])
      expect(await fixture.ledgerStore.info(ledgerId)).toBeUndefined();
    const revived = await infoAt(fixture, back.ml.path);
    expect(revived).toBeDefined();
    expect(revived!.deletableLedgers).toEqual([]);
    expect((await fixture.admin.getTopic('persistent://acme/gc/back')).managedLedgerPath).toBe(back.ml.path);
    expect(await fixture.admin.countTopics('acme/gc')).toBe(1);
  });

  it('sweeps unreferenced ledgers past the grace period, and spares young and referenced ones', async () => {
    const { ml } = await openWithTrimmed(fixture, 'persistent://acme/gc/sweep');
    await ml.close();
    const tags = { [OwnerTag.managedLedger]: ml.path, [OwnerTag.component]: 'managed-ledger' };
    // Created but never recorded (a writer that crashed, or one still about to record them).
    await fixture.ledgerStore.create(8_000_001, { ownerTags: tags });
    await fixture.ledgerStore.create(8_000_002, { ownerTags: tags });
    await fixture.ledgerStore.create(8_000_003, {});
    let offsetMs = 0;
    const collector = fixture.collector({
      config: { ...TEST_COLLECTOR_CONFIG, orphanGraceMs: 3_600_000 },
      now: () => Date.now() + offsetMs,
    });
    expect(collector.status().lastOrphanSweepAtMs).toBe(0);
    const young = await collector.triggerPass({ sweepOrphans: true });
    expect(young.orphansDeleted).toBe(0);
    expect(collector.status().lastOrphanSweepAtMs).toBeGreaterThan(0);
    for (const ledgerId of [8_000_001, 8_000_002, 8_000_003]) {
      expect(await fixture.ledgerStore.info(ledgerId)).toBeDefined();
    }
    offsetMs = 2 * 3_600_000;
    const old = await collector.triggerPass({ sweepOrphans: true });
    expect(old.orphansDeleted).toBe(2);
    expect(old.orphansUntagged).toBe(1);
    expect(await fixture.ledgerStore.info(8_000_001)).toBeUndefined();
    expect(await fixture.ledgerStore.info(8_000_002)).toBeUndefined();
    expect(await fixture.ledgerStore.info(8_000_003)).toBeDefined();
    // Everything metadata references is still there: the ledger list and the cursor's ledger.
    const info = await infoAt(fixture, ml.path);
    for (const ledger of info!.ledgerInfo)
      expect(await fixture.ledgerStore.info(Number(ledger.ledgerId))).toBeDefined();
    const cursorNode = await fixture.metadataStore.get(`${ml.path}/sub`);
    const cursorLedger = Number(fromBinary(ManagedCursorInfoSchema, cursorNode!.value).cursorsLedgerId);
    if (cursorLedger > 0) expect(await fixture.ledgerStore.info(cursorLedger)).toBeDefined();
  });

  it('reads the index, not every topic: a pass costs O(pending) metadata reads', async () => {
    for (let i = 0; i < 60; i++) {
      await fixture.mlMetadata.putManagedLedgerInfo(
        `/managed-ledgers/acme/gc/persistent/idle-${i}`,
        create(ManagedLedgerInfoSchema, {}),
        'absent',
      );
    }
    await fixture.metadataStore.put(LAST_FULL_SCAN_PATH, new TextEncoder().encode(String(Date.now())));
    const collector = fixture.collector();
    const idle = await collector.triggerPass();
    expect(idle).toMatchObject({ fullScan: false, managedLedgersVisited: 0 });
    const { ml } = await openWithTrimmed(fixture, 'persistent://acme/gc/busy');
    await ml.close();
    const busy = await collector.triggerPass();
    expect(busy.managedLedgersVisited).toBe(1);
    // Members, shard listings, then per pending managed ledger: entry, node, cursors (listing + node).
    expect(busy.metadataReads - idle.metadataReads).toBeLessThanOrEqual(5);
  });

  it('finds markers the index misses with a full scan', async () => {
    await fixture.admin.createTenant('acme');
    await fixture.admin.createNamespace('acme/gc', { numberOfTopicBuckets: 4 });
    await fixture.admin.createTopic('persistent://acme/gc/lost');
    const { ml, marked } = await openWithTrimmed(fixture, 'persistent://acme/gc/lost', 7, 4);
    expect(ml.path).toMatch(/\/\$\d\/lost$/);
    await ml.close();
    await fixture.metadataStore.delete(pendingDeletionEntryPath(ml.path));
    // A scan ran a moment ago, so the periodic one is not due; a triggered one is, unless rate-limited.
    await fixture.metadataStore.put(LAST_FULL_SCAN_PATH, new TextEncoder().encode(String(Date.now())));
    const limited = fixture.collector({ config: { ...TEST_COLLECTOR_CONFIG, fullScanMinGapMs: 3_600_000 } });
    await expect(limited.triggerPass({ fullScan: true })).rejects.toMatchObject({ reason: 'FULL_SCAN_RATE_LIMITED' });
    const collector = fixture.collector();
    const unindexed = await collector.triggerPass();
    expect(unindexed).toMatchObject({ ledgersDeleted: 0, fullScan: false });
    const scan = await collector.triggerPass({ fullScan: true });
    expect(scan.fullScan).toBe(true);
    expect(await fixture.metadataStore.get(pendingDeletionEntryPath(ml.path))).toBeDefined();
    expect((await collector.triggerPass()).ledgersDeleted).toBe(marked.length);
  });
});
