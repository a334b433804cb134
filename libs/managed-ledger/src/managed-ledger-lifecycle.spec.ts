import type { ManagedLedgerConfigInput } from './config.js';
import { ManagedLedger } from './managed-ledger.js';
import { payloadOf, testBackends, textOf } from './testing/fixtures.js';
import { InMemoryLedgerStore } from './testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/life/cycle';
const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 4,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  cursor: { snapshotIntervalMs: 0, inlineSnapshotMaxBytes: 0 },
};

describe('terminate', () => {
  it('finishes pending appends, refuses later ones and stays terminated after a restart', async () => {
    const store = new InMemoryLedgerStore();
    store.appendDelayMs = 1;
    const backends = testBackends({ ledgerStore: store });
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    const pending = Array.from({ length: 10 }, (_, i) => ml.append(payloadOf(`p${i}`)));
    const last = await ml.terminate();
    const results = await Promise.all(pending);
    expect(last).toEqual(results[results.length - 1]!.position);
    await expect(ml.append(payloadOf('late'))).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'TOPIC_TERMINATED',
    });
    expect(ml.info().info.state).toBe('terminated');
    expect(ml.info().info.terminatedPosition).toEqual(last);
    await ml.close();
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    expect(reopened.state).toBe('terminated');
    await expect(reopened.append(payloadOf('x'))).rejects.toMatchObject({ reason: 'TOPIC_TERMINATED' });
    const cursor = await reopened.openCursor('reader', { start: { initialPosition: 'earliest' } });
    expect((await cursor.readEntries({ maxEntries: 100 })).map((e) => textOf(e.payload))).toEqual(
      results.map((_, i) => `p${i}`),
    );
    expect(await cursor.readEntriesOrWait({ timeoutMs: 1_000 })).toEqual([]);
    await reopened.close();
  });
});

describe('delete', () => {
  it('marks the managed ledger DELETING with every data and cursor ledger deletable in one write', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    const written = [];
    for (let i = 0; i < 10; i++) written.push(await ml.append(payloadOf(`d${i}`)));
    const cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
    cursor.ack([written[3]!.position]);
    await cursor.flush();
    const dataLedgers = ml.ledgers().map((l) => l.ledgerId);
    const cursorLedger = cursor.cursorLedgerId;
    const versionBefore = ml.info().version;
    await ml.delete();
    const stored = await backends.deps().metadata.getManagedLedgerInfo(ml.path);
    expect(stored!.version).toBe(versionBefore + 1);
    const { info } = ml.info();
    expect(info.state).toBe('deleting');
    expect(info.ledgers).toEqual([]);
    expect(info.deletableLedgers.map((d) => d.ledgerId).sort((x, y) => x - y)).toEqual(
      [...dataLedgers, cursorLedger].sort((x, y) => x - y),
    );
    expect(info.deletableLedgers.find((d) => d.ledgerId === cursorLedger)).toMatchObject({
      component: 'cursor',
      cursorName: 'sub',
    });
    expect(await backends.deps().metadata.getCursorInfo(ml.path, 'sub')).toBeUndefined();
    await expect(ml.append(payloadOf('x'))).rejects.toMatchObject({ reason: 'MANAGED_LEDGER_DELETING' });
    await expect(ManagedLedger.open(TOPIC, backends.deps(), { config })).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      reason: 'MANAGED_LEDGER_DELETING',
    });
  });
});

describe('rollover by age', () => {
  it('rolls an idle ledger over once it is maxLedgerAgeMs old, and not an empty one', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), {
      config: { ...config, maxEntriesPerLedger: 1000, maxLedgerAgeMs: 60_000, maintenanceIntervalMs: 5 },
    });
    const first = await ml.append(payloadOf('old'));
    backends.clock.advance(60_000);
    for (let i = 0; i < 200 && ml.ledgers().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(ml.ledgers().length).toBe(2);
    expect(ml.ledgers()[0]!.ledgerId).toBe(first.position.ledgerId);
    backends.clock.advance(60_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(ml.ledgers().length).toBe(2);
    await ml.close();
  });
});

describe('config', () => {
  it('rejects bad config with INVALID_ARGUMENT naming the field', async () => {
    await expect(
      ManagedLedger.open(TOPIC, testBackends().deps(), { config: { maxEntriesPerLedger: 0 } }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_CONFIG',
      message: expect.stringContaining('maxEntriesPerLedger'),
    });
    await expect(ManagedLedger.open('bad topic //', testBackends().deps())).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
  });
});
