import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { checkLedgerCoverage, readWholeLog } from '../testing/robustness/log-invariants.js';
import { untilNoFindings } from '../testing/robustness/waiting.js';

const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 1,
  maxWriteBatchEntries: 1,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

describe('taking a topic over from a live owner', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('wins against an owner that records a new ledger while the takeover recovers the last one', async () => {
    const topic = 'persistent://acme/robust/takeover-rolling';
    const old = backend.owner('old');
    const first = await ManagedLedger.open(topic, old.deps, { config });
    await first.append(payloadOf('warm-up'));
    // The old owner rolls over after every entry; each rollover takes a ledger id that arrives 30 ms late.
    old.metadata.delaysMs.allocateLedgerId = 30;
    const outcomes = Array.from({ length: 20 }, (_, i) =>
      first.append(payloadOf(`e${i}`)).then(
        () => 'acknowledged',
        () => 'failed',
      ),
    );
    // The new owner's recovery reads take longer than a rollover of the old one.
    const next = backend.owner('new');
    next.ledgerStore.delaysMs.read = 100;
    const second = await ManagedLedger.open(topic, next.deps, { config });
    const results = await Promise.all(outcomes);
    // Fenced mid-stream, the old owner refused what it had not written yet.
    expect(results).toContain('failed');
    const acknowledged = results.filter((r) => r === 'acknowledged').length;
    expect((await readWholeLog(second)).length).toBe(acknowledged + 1);
    // Ledger ids rise along the list (positions compare by them): the new owner's ledger comes last and is newest.
    const ids = second.ledgers().map((ledger) => ledger.ledgerId);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await first.close();
    await second.close();
  });

  it('keeps ledger ids rising along the list when the previous owner rolls over while the node is read', async () => {
    const topic = 'persistent://acme/robust/takeover-ids';
    const old = backend.owner('ids-old');
    const first = await ManagedLedger.open(topic, old.deps, { config });
    await first.append(payloadOf('warm-up'));
    // The old owner rolls over after every entry while the new owner's read of the node is slow: ledgers the
    // old owner records meanwhile get ids above the one the new owner took at the start of its open.
    const appending = Array.from({ length: 10 }, (_, i) => first.append(payloadOf(`e${i}`)).catch(() => 'failed'));
    const next = backend.owner('ids-new');
    next.metadata.delaysMs.getManagedLedgerInfo = 100;
    const second = await ManagedLedger.open(topic, next.deps, { config });
    await Promise.all(appending);
    await second.append(payloadOf('after'));
    const ids = second.ledgers().map((ledger) => ledger.ledgerId);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    await first.close();
    await second.close();
  });

  it('takes a cleanly closed topic over with one write of its node', async () => {
    const topic = 'persistent://acme/robust/takeover-closed';
    const first = await ManagedLedger.open(topic, backend.owner('closed-a').deps, { config });
    await first.append(payloadOf('before'));
    await first.close();
    const next = backend.owner('closed-b');
    const writes = jest.spyOn(next.metadata, 'putManagedLedgerInfo');
    const second = await ManagedLedger.open(topic, next.deps, { config });
    // Nothing to recover, so no claim ahead of the write that records the new ledger.
    expect(writes).toHaveBeenCalledTimes(1);
    await second.append(payloadOf('after'));
    expect((await readWholeLog(second)).map((e) => e.firstOffset)).toEqual([0, 1]);
    await second.close();
  });

  it('starts over, leaking nothing, when another owner records a ledger while it reads a closed topic', async () => {
    const topic = 'persistent://acme/robust/takeover-closed-race';
    const first = await ManagedLedger.open(topic, backend.owner('race-a').deps, { config });
    await first.append(payloadOf('a0'));
    await first.close();
    // B reads the closed node, then waits for its ledger id while C takes the topic and writes.
    const slow = backend.owner('race-b');
    slow.metadata.delaysMs.allocateLedgerId = 150;
    const opening = ManagedLedger.open(topic, slow.deps, { config });
    const third = await ManagedLedger.open(topic, backend.owner('race-c').deps, { config });
    await third.append(payloadOf('c0'));
    const second = await opening;
    // B's write of the node failed, so it started over: it claimed the node and fenced C's ledger.
    await expect(third.append(payloadOf('c1'))).rejects.toMatchObject({ code: 'ABORTED' });
    await second.append(payloadOf('b0'));
    const log = await readWholeLog(second);
    expect(log.map((e) => e.firstOffset)).toEqual([0, 1, 2]);
    expect(
      await untilNoFindings(() => checkLedgerCoverage(backend.ledgerStore, backend.metadata, second.path)),
    ).toEqual([]);
    await third.close();
    await second.close();
  });

  it('discards the ledger it made when the topic it takes over is terminated', async () => {
    const topic = 'persistent://acme/robust/takeover-terminated';
    const first = await ManagedLedger.open(topic, backend.owner('terminated-a').deps, { config });
    await first.append(payloadOf('last'));
    await first.terminate();
    await first.close();
    const second = await ManagedLedger.open(topic, backend.owner('terminated-b').deps, { config });
    expect(
      await untilNoFindings(() => checkLedgerCoverage(backend.ledgerStore, backend.metadata, second.path)),
    ).toEqual([]);
    await second.close();
  });
});
