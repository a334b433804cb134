import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { createBus, InProcessBus, type Bus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { comparePositions, type Position } from '@ledgerline/cursor-codec';
import { PENDING_DELETION_SHARDS, pendingDeletionShardDir } from '@ledgerline/ledger-info';
import { ManagedLedger, MetadataStoreManagedLedgerMetadata, type ManagedCursor } from '@ledgerline/managed-ledger';
import { startMetadataService, type RunningMetadataService } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { ManagedCursorInfoSchema, ManagedLedgerInfoSchema, ManagedLedgerState } from '@ledgerline/proto';
import { serviceConfigSchema } from '@ledgerline/service-kit';
import { NATS_URL_ENV, WorkerProcess } from '@ledgerline/testing';
import { DroppingBus, seededRandom } from '../testing/robustness/dropping-bus.js';

/*
 * The etcd-style history: writers append, roll, trim (cursors ack), delete
 * and re-create topics with the same names; cursors roll their ledgers; two
 * collector processes work meanwhile, over a ledger store failing 30% of
 * deletes, and are SIGKILLed at random points and restarted; hints travel on
 * NATS with half of them dropped. After convergence the model must hold:
 * no referenced ledger deleted (every unconsumed acknowledged entry reads
 * back, every cursor recovers), no unreferenced ledger left, no marker left.
 *
 * LEDGERLINE_ROBUSTNESS_SEED replays one seed; LEDGERLINE_ROBUSTNESS_RUNS runs
 * more seeds; LEDGERLINE_GC_HISTORY_STEPS makes each history longer.
 */
const SCRIPT = join(__dirname, '..', 'testing', 'robustness', 'collector-process.ts');
const NAMESPACE = 'acme/gc';
const TOPICS = ['a', 'b', 'c', 'd'];
const COLLECTORS = 2;
const DELETE_FAILURE_RATE = 0.3;
const HINT_DROP_RATE = 0.5;
const STEPS = Number(process.env['LEDGERLINE_GC_HISTORY_STEPS'] ?? 160);
const KILL_EVERY_STEPS = 20;
const CONVERGENCE_TIMEOUT_MS = 60_000;
const STARTUP_TIMEOUT_MS = 30_000;
const HISTORY_TIMEOUT_MS = 150_000;

const ML_CONFIG = {
  maxEntriesPerLedger: 3,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
  cursor: { snapshotIntervalMs: 0, maxSnapshotsPerLedger: 2, inlineSnapshotMaxBytes: 0 },
};

const COLLECTOR_CONFIG = {
  gcIntervalMs: 200,
  hintDelayMs: 20,
  memberTtlMs: 600,
  indexSettleMs: 300,
  retryBaseDelayMs: 20,
  retryMaxDelayMs: 200,
  orphanSweepIntervalMs: 3_600_000,
  fullScanIntervalMs: 3_600_000,
};

interface Recorded {
  position: Position;
  payload: string;
}

interface LiveTopic {
  ml: ManagedLedger;
  cursor: ManagedCursor;
  entries: Recorded[];
  acked?: Position;
}

function seeds(): number[] {
  const fixed = process.env['LEDGERLINE_ROBUSTNESS_SEED'];
  if (fixed !== undefined) return [Number(fixed)];
  const runs = Number(process.env['LEDGERLINE_ROBUSTNESS_RUNS'] ?? 1);
  return Array.from({ length: runs }, (_, index) => 20_261_201 + index * 7_919);
}

class History {
  readonly dir = mkdtempSync(join(tmpdir(), 'ledgerline-gc-history-'));
  readonly metadataStore = new SqliteMetadataStore({ path: join(this.dir, 'metadata.db'), synchronous: 'NORMAL' });
  readonly ledgersPath = join(this.dir, 'ledgers.db');
  readonly ledgerStore = new SqliteLedgerStore({ path: this.ledgersPath, synchronous: 'NORMAL' });
  readonly live = new Map<string, LiveTopic>();
  readonly collectors = new Map<number, WorkerProcess>();
  service!: RunningMetadataService;
  bus!: Bus;
  markedTotal = 0;
  deletedTopics = 0;
  private generation = 0;

  constructor(readonly rng: () => number) {}

  async start(): Promise<void> {
    this.service = await startMetadataService({
      store: this.metadataStore,
      bus: new InProcessBus(),
      signals: [],
      config: {
        ...serviceConfigSchema.parse({
          grpcHost: '127.0.0.1',
          grpcPort: 0,
          metricsHost: '127.0.0.1',
          metricsPort: 0,
          logLevel: 'silent',
        }),
        reconcileIntervalMs: 3_600_000,
        recountSettleMs: 30_000,
        ownerSweepIntervalMs: 60_000,
      },
    });
    const natsUrl = process.env[NATS_URL_ENV];
    const inner =
      natsUrl === undefined
        ? new InProcessBus()
        : await createBus({ kind: 'nats', servers: natsUrl, name: 'gc-history-writers' });
    this.bus = new DroppingBus(inner, HINT_DROP_RATE, this.rng);
    await this.service.admin.createTenant('acme');
    await this.service.admin.createNamespace(NAMESPACE, {});
    for (let slot = 0; slot < COLLECTORS; slot++) this.spawn(slot);
  }

  spawn(slot: number): WorkerProcess {
    this.generation++;
    const natsUrl = process.env[NATS_URL_ENV];
    const worker = new WorkerProcess(SCRIPT, {
      metadataAddress: `127.0.0.1:${this.service.port}`,
      ledgersPath: this.ledgersPath,
      ...(natsUrl === undefined ? {} : { natsUrl }),
      instanceId: `collector-${slot}-${this.generation}`,
      failureRate: DELETE_FAILURE_RATE,
      config: COLLECTOR_CONFIG,
    });
    this.collectors.set(slot, worker);
    return worker;
  }

  async killAndRestart(): Promise<void> {
    const slot = Math.floor(this.rng() * COLLECTORS);
    await this.collectors.get(slot)?.kill();
    this.spawn(slot);
  }

  async createTopic(name: string): Promise<void> {
    await this.service.admin.createTopic(`persistent://${NAMESPACE}/${name}`);
    const ml = await ManagedLedger.open(
      `persistent://${NAMESPACE}/${name}`,
      {
        ledgerStore: this.ledgerStore,
        metadata: new MetadataStoreManagedLedgerMetadata(this.metadataStore),
        bus: this.bus,
      },
      { config: ML_CONFIG },
    );
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    this.live.set(name, { ml, cursor, entries: [] });
  }

  /** Opens a live topic again (as a new owner would) without creating it. */
  async createTopicAgain(name: string): Promise<void> {
    const ml = await ManagedLedger.open(
      `persistent://${NAMESPACE}/${name}`,
      { ledgerStore: this.ledgerStore, metadata: new MetadataStoreManagedLedgerMetadata(this.metadataStore) },
      { config: ML_CONFIG },
    );
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    this.live.set(name, { ml, cursor, entries: [] });
  }

  async deleteTopic(name: string): Promise<void> {
    const topic = this.live.get(name)!;
    await topic.ml.close();
    this.live.delete(name);
    const marked = await this.service.admin.deleteTopic(`persistent://${NAMESPACE}/${name}`);
    this.markedTotal += marked.length;
    this.deletedTopics++;
  }

  async append(topic: LiveTopic, name: string): Promise<void> {
    const count = 1 + Math.floor(this.rng() * 3);
    for (let i = 0; i < count; i++) {
      const payload = `${name}/${this.generation}/${topic.entries.length}/${this.rng().toString(36).slice(2, 8)}`;
      const result = await topic.ml.append(new TextEncoder().encode(payload));
      topic.entries.push({ position: result.position, payload });
    }
  }

  async ack(topic: LiveTopic): Promise<void> {
    if (topic.entries.length === 0) return;
    const from =
      topic.acked === undefined ? 0 : topic.entries.findIndex((e) => comparePositions(e.position, topic.acked!) > 0);
    if (from < 0) return;
    const index = from + Math.floor(this.rng() * (topic.entries.length - from));
    topic.acked = topic.entries[index]!.position;
    topic.cursor.ackCumulative(topic.acked);
    if (this.rng() < 0.5) await topic.cursor.flush();
  }

  async step(): Promise<void> {
    const name = TOPICS[Math.floor(this.rng() * TOPICS.length)]!;
    const topic = this.live.get(name);
    const roll = this.rng();
    if (topic === undefined) {
      if (roll < 0.6) await this.createTopic(name);
      return;
    }
    if (roll < 0.5) await this.append(topic, name);
    else if (roll < 0.8) await this.ack(topic);
    else if (roll < 0.9) await topic.ml.trim();
    else if (roll < 0.95) await this.deleteTopic(name);
  }

  async ensureCollectorsRunning(): Promise<void> {
    for (let slot = 0; slot < COLLECTORS; slot++) {
      const worker = this.collectors.get(slot)!;
      await worker.waitFor((lines) => lines.some((line) => typeof line['started'] === 'string'), STARTUP_TIMEOUT_MS);
    }
  }

  /** Markers, DELETING nodes and index entries still in metadata. */
  async leftovers(): Promise<{ markers: number; deleting: number; indexEntries: number }> {
    let markers = 0;
    let deleting = 0;
    for (const name of (await this.metadataStore.children(`/managed-ledgers/${NAMESPACE}/persistent`)).names) {
      const node = await this.metadataStore.get(`/managed-ledgers/${NAMESPACE}/persistent/${name}`);
      if (node === undefined) continue;
      const info = fromBinary(ManagedLedgerInfoSchema, node.value);
      markers += info.deletableLedgers.length;
      if (info.state === ManagedLedgerState.DELETING) deleting++;
    }
    let indexEntries = 0;
    for (let shard = 0; shard < PENDING_DELETION_SHARDS; shard++) {
      indexEntries += (await this.metadataStore.children(pendingDeletionShardDir(shard))).names.length;
    }
    return { markers, deleting, indexEntries };
  }

  /** Waits (bounded) for the collectors to finish everything. */
  async converge(): Promise<void> {
    const deadline = Date.now() + CONVERGENCE_TIMEOUT_MS;
    for (;;) {
      const left = await this.leftovers();
      if (left.markers === 0 && left.deleting === 0 && left.indexEntries === 0) return;
      if (Date.now() > deadline)
        throw new Error(`no convergence within ${CONVERGENCE_TIMEOUT_MS} ms: ${JSON.stringify(left)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Every ledger metadata references: ledger lists and cursor ledgers. */
  async referencedLedgers(): Promise<Set<number>> {
    const referenced = new Set<number>();
    const dir = `/managed-ledgers/${NAMESPACE}/persistent`;
    for (const name of (await this.metadataStore.children(dir)).names) {
      const node = await this.metadataStore.get(`${dir}/${name}`);
      if (node === undefined) continue;
      for (const ledger of fromBinary(ManagedLedgerInfoSchema, node.value).ledgerInfo)
        referenced.add(Number(ledger.ledgerId));
      for (const cursor of (await this.metadataStore.children(`${dir}/${name}`)).names) {
        const cursorNode = await this.metadataStore.get(`${dir}/${name}/${cursor}`);
        const ledgerId = Number(fromBinary(ManagedCursorInfoSchema, cursorNode!.value).cursorsLedgerId);
        if (ledgerId > 0) referenced.add(ledgerId);
      }
    }
    return referenced;
  }

  async allLedgers(): Promise<number[]> {
    const ids: number[] = [];
    let after: number | undefined;
    do {
      const page = await this.ledgerStore.list(after === undefined ? {} : { after });
      ids.push(...page.ledgerIds);
      after = page.next;
    } while (after !== undefined);
    return ids;
  }

  async close(): Promise<void> {
    for (const worker of this.collectors.values()) await worker.kill();
    for (const topic of this.live.values()) await topic.ml.close().catch(() => undefined);
    await this.service?.shutdown('test over');
    await this.bus?.close();
    await this.ledgerStore.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

describe('garbage-collector robustness history', () => {
  for (const seed of seeds()) {
    it(
      `deletes no live ledger and leaks none under kills, failing deletes and lost hints (seed ${seed})`,
      async () => {
        const history = new History(seededRandom(seed));
        try {
          await history.start();
          for (const name of TOPICS) await history.createTopic(name);
          await history.ensureCollectorsRunning();
          for (let step = 0; step < STEPS; step++) {
            await history.step();
            if (step % KILL_EVERY_STEPS === KILL_EVERY_STEPS - 1) await history.killAndRestart();
          }
          // Every history deletes and re-creates a topic with the same name at least once.
          if (history.deletedTopics === 0) {
            await history.deleteTopic(TOPICS[0]!);
            await history.createTopic(TOPICS[0]!);
          }
          for (const topic of history.live.values()) {
            history.markedTotal += topic.ml.info().info.deletableLedgers.length;
            await topic.ml.close();
          }
          const durable = new Map(
            [...history.live].map(([name, topic]) => [name, { entries: topic.entries, acked: topic.acked }]),
          );
          history.live.clear();
          await history.ensureCollectorsRunning();
          await history.converge();
          for (const worker of history.collectors.values()) await worker.kill();

          // No referenced ledger deleted, no unreferenced one left.
          const referenced = await history.referencedLedgers();
          const stored = new Set(await history.allLedgers());
          const deletedButReferenced = [...referenced].filter((id) => !stored.has(id));
          const leaked = [...stored].filter((id) => !referenced.has(id));
          expect({ deletedButReferenced, leaked }).toEqual({ deletedButReferenced: [], leaked: [] });
          expect(history.markedTotal).toBeGreaterThan(0);

          // Every acknowledged entry the cursor has not consumed reads back; every cursor recovers.
          for (const [name, model] of durable) {
            await history.createTopicAgain(name);
            const topic = history.live.get(name)!;
            if (model.acked !== undefined)
              expect(comparePositions(topic.cursor.markDeletePosition, model.acked)).toBeGreaterThanOrEqual(0);
            const listed = new Set(topic.ml.ledgers().map((l) => l.ledgerId));
            for (const entry of model.entries) {
              const consumed = model.acked !== undefined && comparePositions(entry.position, model.acked) <= 0;
              if (consumed && !listed.has(entry.position.ledgerId)) continue;
              expect(listed.has(entry.position.ledgerId)).toBe(true);
              const [read] = await topic.ml.readEntries(entry.position, 1);
              expect(new TextDecoder().decode(read!.payload)).toBe(entry.payload);
            }
          }
        } finally {
          await history.close();
        }
      },
      HISTORY_TIMEOUT_MS,
    );
  }
});
