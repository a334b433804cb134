import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisLedgerStore, SqliteLedgerStore, type LedgerStore } from '@ledgerline/ledger-store';
import { createMetadataStore, type MetadataStore } from '@ledgerline/metadata-store';
import { LedgerlineError } from '@ledgerline/errors';
import { sharedServers, uniqueNamespace } from '@ledgerline/testing';
import type { ManagedLedgerConfigInput } from './config.js';
import type { AppendResult } from './entry.js';
import { canonicalMarkDelete } from './ledgers/ledger-views.js';
import { ManagedLedger } from './managed-ledger.js';
import { FaultInjectingLedgerStore } from './testing/fault-injecting-ledger-store.js';
import { payloadOf, testBackends, textOf } from './testing/fixtures.js';

/** One owner's clients of a shared backend: what a writer-owner process would hold. */
interface Clients {
  ledgerStore: FaultInjectingLedgerStore;
  metadataStore: MetadataStore;
  close(): Promise<void>;
}

interface Backend {
  name: string;
  connect(): Promise<Clients>;
  dispose(): void;
}

function sqliteBackend(): Backend {
  const folder = mkdtempSync(join(tmpdir(), 'managed-ledger-'));
  return {
    name: 'embedded SQLite',
    connect: async () => {
      const ledgerStore = new SqliteLedgerStore({ path: join(folder, 'ledgers.db'), synchronous: 'NORMAL' });
      const metadataStore = await createMetadataStore({
        kind: 'sqlite',
        path: join(folder, 'metadata.db'),
        synchronous: 'NORMAL',
      });
      return clients(ledgerStore, metadataStore);
    },
    dispose: () => rmSync(folder, { recursive: true, force: true }),
  };
}

function redisBackend(): Backend {
  const keyPrefix = `${uniqueNamespace('ml')}:`;
  return {
    name: 'Redis',
    connect: async () => {
      const url = sharedServers().redisUrl;
      const ledgerStore = new RedisLedgerStore({ url, keyPrefix });
      const metadataStore = await createMetadataStore({ kind: 'redis', url, keyPrefix });
      return clients(ledgerStore, metadataStore);
    },
    dispose: () => undefined,
  };
}

function clients(ledgerStore: LedgerStore, metadataStore: MetadataStore): Clients {
  return {
    ledgerStore: new FaultInjectingLedgerStore(ledgerStore),
    metadataStore,
    close: async () => {
      await ledgerStore.close();
      await metadataStore.close();
    },
  };
}

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 8,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 5,
  cursor: { snapshotIntervalMs: 0, inlineSnapshotMaxBytes: 128, snapshotMaxEntrySizeBytes: 1024 },
};

describe.each([
  ['sqlite', sqliteBackend],
  ['redis', redisBackend],
] as const)('managed ledger on %s', (_kind, makeBackend) => {
  let backend: Backend;
  const opened: Clients[] = [];
  let topicCounter = 0;

  beforeAll(() => {
    backend = makeBackend();
  });
  afterAll(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    backend.dispose();
  });

  async function owner() {
    const c = await backend.connect();
    opened.push(c);
    const fixtures = testBackends({ ledgerStore: c.ledgerStore, metadataStore: c.metadataStore });
    return { clients: c, deps: fixtures.deps() };
  }

  function freshTopic(): string {
    return `persistent://acme/suite/topic-${process.pid}-${topicCounter++}`;
  }

  it('appends and reads across rollovers, and continues offsets after a clean restart', async () => {
    const topic = freshTopic();
    const first = await owner();
    const ml = await ManagedLedger.open(topic, first.deps, { config });
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 30 }, (_, i) => ml.append(payloadOf(`r${i}`), 2)));
    expect(ml.ledgers().length).toBeGreaterThanOrEqual(4);
    const read = await cursor.readEntries({ maxEntries: 100 });
    expect(read.map((e) => textOf(e.payload))).toEqual(written.map((_, i) => `r${i}`));
    cursor.ack(written.filter((_, i) => i % 3 !== 0).map((r) => r.position));
    cursor.ackCumulative(written[9]!.position);
    const before = cursor.exportState();
    await ml.close();
    const again = await ManagedLedger.open(topic, (await owner()).deps, { config });
    const recovered = again.getCursor('sub')!.exportState();
    expect(recovered.markDelete).toEqual(canonicalMarkDelete(again.ledgers(), before.markDelete));
    expect(recovered.ackedRanges).toEqual(before.ackedRanges);
    expect((await again.append(payloadOf('next'))).firstOffset).toBe(60);
    // Unacknowledged: entries after 9 whose index is a multiple of 3 (2 messages each), and 'next'.
    const unacked = written.filter((_, i) => i > 9 && i % 3 === 0).length;
    expect(await again.getCursor('sub')!.backlog()).toBe(unacked * 2 + 1);
    await again.close();
  });

  it('a second owner fences the first; every acknowledged entry survives, offsets continue', async () => {
    const topic = freshTopic();
    const first = await owner();
    const ml = await ManagedLedger.open(topic, first.deps, { config: { ...config, maxEntriesPerLedger: 1000 } });
    const acknowledged: AppendResult[] = [];
    const outcomes = Array.from({ length: 200 }, (_, i) =>
      ml.append(payloadOf(`x${i}`)).then(
        (r) => (acknowledged.push(r), 'ok'),
        (err: unknown) => (err as LedgerlineError).reason,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await ManagedLedger.open(topic, (await owner()).deps, { config });
    const reasons = await Promise.all(outcomes);
    expect(reasons.filter((r) => r !== 'ok').every((r) => r === 'LEDGER_FENCED' || r === 'MANAGED_LEDGER_FENCED')).toBe(
      true,
    );
    await expect(ml.append(payloadOf('late'))).rejects.toMatchObject({ code: 'ABORTED' });
    const reader = await second.openCursor('check', { start: { initialPosition: 'earliest' } });
    const all = await reader.readEntries({ maxEntries: 1000 });
    expect(all.map((e) => textOf(e.payload))).toEqual(acknowledged.map((_, i) => `x${i}`));
    expect((await second.append(payloadOf('after'))).firstOffset).toBe(acknowledged.length);
    await ml.close();
    await second.close();
  });

  it('survives ledger-store failures mid-append and a chunked cursor state through a crash', async () => {
    const topic = freshTopic();
    const first = await owner();
    const bigConfig = { ...config, maxEntriesPerLedger: 2_000 };
    const ml = await ManagedLedger.open(topic, first.deps, { config: bigConfig });
    const cursor = await ml.openCursor('big', { start: { initialPosition: 'earliest' } });
    const written: AppendResult[] = [];
    for (let round = 0; round < 4; round++) {
      first.clients.ledgerStore.appendFaults.push(round % 2 === 0 ? 'before' : 'after');
      written.push(
        ...(await Promise.all(Array.from({ length: 3_000 }, (_, i) => ml.append(payloadOf(`f${round}-${i}`))))),
      );
    }
    let next = 0;
    for (const r of written) {
      expect(r.firstOffset).toBe(next);
      next = r.lastOffset + 1;
    }
    // Pseudo-random holes, so the state needs several cursor-ledger entries (chunks and a footer).
    let seed = 11;
    const acked = written.filter(() => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 3 !== 0));
    cursor.ack(acked.map((r) => r.position));
    await cursor.flush();
    expect(cursor.cursorLedgerId).toBeGreaterThan(0);
    expect(cursor.lastSnapshot!.entries).toBeGreaterThan(1);
    const before = cursor.exportState();
    // A crash: the next owner opens without the first closing anything.
    const second = await ManagedLedger.open(topic, (await owner()).deps, { config: bigConfig });
    expect(second.getCursor('big')!.exportState().ackedRanges).toEqual(before.ackedRanges);
    const reader = await second.openCursor('all', { start: { initialPosition: 'earliest' } });
    expect((await reader.readEntries({ maxEntries: 10_000 })).length).toBe(10_000);
    expect(await second.getCursor('big')!.backlog()).toBe(12_000 - acked.length);
    await ml.close();
    await second.close();
  });

  it('trims ledgers below the slowest cursor into the deletable set, never the current ledger', async () => {
    const topic = freshTopic();
    const ml = await ManagedLedger.open(topic, (await owner()).deps, { config });
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 30 }, (_, i) => ml.append(payloadOf(`t${i}`))));
    const ledgersBefore = ml.ledgers().map((l) => l.ledgerId);
    cursor.ackCumulative(written[29]!.position);
    await ml.trim();
    expect(ml.ledgers().map((l) => l.ledgerId)).toEqual([ledgersBefore[ledgersBefore.length - 1]]);
    const stored = await (await owner()).deps.metadata.getManagedLedgerInfo(ml.path);
    const marked = stored!.value.deletableLedgers.map((d) => Number(d.ledgerId));
    expect(marked).toEqual(ledgersBefore.slice(0, -1));
    await ml.close();
  });
});
