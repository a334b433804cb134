import { fromBinary } from '@bufbuild/protobuf';
import { PENDING_DELETION_SHARDS } from '@ledgerline/ledger-info';
import { ManagedLedger } from '@ledgerline/managed-ledger';
import { ManagedLedgerInfoSchema } from '@ledgerline/proto';
import type { GarbageCollector } from './collector.js';
import { collectorFixture, type CollectorFixture } from './testing/collector-fixture.js';

const config = {
  maxEntriesPerLedger: 1,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
};
const TOPICS = 12;
/** Passes each collector may run before the markers must be gone (each pass retries what failed). */
const MAX_ROUNDS = 20;

/** Topics with trimmed ledgers, half of them then deleted: returns every marked ledger id. */
async function markLedgers(fixture: CollectorFixture): Promise<number[]> {
  await fixture.admin.createTenant('acme');
  await fixture.admin.createNamespace('acme/par', {});
  const marked: number[] = [];
  for (let t = 0; t < TOPICS; t++) {
    const topic = `persistent://acme/par/t${t}`;
    await fixture.admin.createTopic(topic);
    const ml = await ManagedLedger.open(
      topic,
      { ledgerStore: fixture.ledgerStore, metadata: fixture.mlMetadata },
      { config },
    );
    for (let i = 0; i < 6; i++) await ml.append(new TextEncoder().encode(`${t}/${i}`));
    await ml.trim();
    const trimmed = ml.info().info.deletableLedgers.map((d) => d.ledgerId);
    await ml.close();
    if (t % 2 === 0) marked.push(...(await fixture.admin.deleteTopic(topic)).map(Number), ...trimmed);
    else marked.push(...trimmed);
  }
  return [...new Set(marked)];
}

async function markersLeft(fixture: CollectorFixture): Promise<number> {
  let left = 0;
  for (const name of (await fixture.metadataStore.children('/managed-ledgers/acme/par/persistent')).names) {
    const node = await fixture.metadataStore.get(`/managed-ledgers/acme/par/persistent/${name}`);
    if (node !== undefined) left += fromBinary(ManagedLedgerInfoSchema, node.value).deletableLedgers.length;
  }
  return left;
}

/**
 * Runs rounds of passes until no marker is left. The first round always runs: a started
 * collector's own first pass may still be in flight, with its markers already removed but its
 * deletions not yet counted (a pass adds its counts when it ends), and a triggered pass queues
 * behind it.
 */
async function runUntilDone(fixture: CollectorFixture, collectors: GarbageCollector[]): Promise<number> {
  let round = 0;
  do {
    await Promise.all(collectors.map((c) => c.triggerPass()));
    round++;
  } while (round < MAX_ROUNDS && (await markersLeft(fixture)) > 0);
  return collectors.reduce((sum, c) => sum + c.status().ledgersDeleted, 0);
}

describe('three collectors in parallel', () => {
  let fixture: CollectorFixture;
  beforeEach(() => {
    fixture = collectorFixture();
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('all working every shard at once: never double-count, never miss, under failing deletes', async () => {
    const marked = await markLedgers(fixture);
    fixture.ledgerStore.failureRate = 0.3;
    // Not started: each sees only itself, so all three work on every managed ledger at the same time.
    const collectors = [0, 1, 2].map((i) => fixture.collector({ instanceId: `solo-${i}` }));
    const deleted = await runUntilDone(fixture, collectors);
    fixture.ledgerStore.failureRate = 0;
    expect(await markersLeft(fixture)).toBe(0);
    expect(deleted).toBe(marked.length);
    for (const ledgerId of marked) expect(await fixture.ledgerStore.info(ledgerId)).toBeUndefined();
    expect(fixture.ledgerStore.failures).toBeGreaterThan(0);
    expect((await fixture.metadataStore.children('/managed-ledgers/acme/par/persistent')).names).toHaveLength(
      TOPICS / 2,
    );
  });

  it('started as members: the shards are split between them, each exactly once', async () => {
    const marked = await markLedgers(fixture);
    const collectors = [0, 1, 2].map((i) => fixture.collector({ instanceId: `member-${i}` }));
    for (const collector of collectors) await collector.start();
    // Every member has seen the others once its pass ran after all three joined.
    const deleted = await runUntilDone(fixture, collectors);
    await Promise.all(collectors.map((c) => c.triggerPass()));
    const owned = collectors.map((c) => c.status().ownedShards);
    expect(owned.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: PENDING_DELETION_SHARDS }, (_, i) => i));
    for (const shards of owned) expect(shards.length).toBeGreaterThan(0);
    expect(collectors.map((c) => c.status().members)).toEqual([3, 3, 3]);
    expect(deleted).toBe(marked.length);
    expect(await markersLeft(fixture)).toBe(0);
  });
});
