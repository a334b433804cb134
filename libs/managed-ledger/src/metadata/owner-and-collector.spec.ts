import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { ManagedLedgerInfoSchema } from '@ledgerline/proto';
import { decodePendingDeletionEntry, isCollectorChange, pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, type TestBackends } from '../testing/fixtures.js';

const TOPIC = 'persistent://acme/gc/t';
const config = {
  maxEntriesPerLedger: 2,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: 0,
  retentionSizeBytes: 0,
};

async function trimmedLedger(backends: TestBackends) {
  const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
  for (let i = 0; i < 5; i++) await ml.append(payloadOf(`m${i}`));
  // Rollovers trim in the background; trim() joins the one in flight.
  await ml.trim();
  expect(ml.info().info.deletableLedgers.length).toBeGreaterThan(0);
  return { ml };
}

/** The collector's compare-and-set: the node without the markers it finished. */
async function removeMarkers(backends: TestBackends, path: string): Promise<void> {
  const node = await backends.metadataStore.get(path);
  const info = fromBinary(ManagedLedgerInfoSchema, node!.value);
  info.deletableLedgers = [];
  await backends.metadataStore.put(path, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion: node!.version });
}

describe('the owner and the garbage collector', () => {
  it('indexes the managed ledger before its first marker', async () => {
    const backends = testBackends();
    const { ml } = await trimmedLedger(backends);
    const entry = await backends.metadataStore.get(pendingDeletionEntryPath(ml.path));
    expect(decodePendingDeletionEntry(entry!.value).managedLedgerPath).toBe(ml.path);
  });

  it('adopts a change that only removed markers and keeps writing on top of it', async () => {
    const backends = testBackends();
    const { ml } = await trimmedLedger(backends);
    await removeMarkers(backends, ml.path);
    for (let i = 0; i < 4; i++) await ml.append(payloadOf(`after${i}`));
    expect(ml.state).toBe('open');
    const stored = fromBinary(ManagedLedgerInfoSchema, (await backends.metadataStore.get(ml.path))!.value);
    expect(stored.ledgerInfo.map((l) => Number(l.ledgerId))).toEqual(ml.ledgers().map((l) => l.ledgerId));
    await ml.close();
  });

  it('is still fenced by a new owner, even when the collector also removed markers', async () => {
    const backends = testBackends();
    const { ml } = await trimmedLedger(backends);
    const second = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    await removeMarkers(backends, ml.path);
    await expect(async () => {
      for (let i = 0; i < 4; i++) await ml.append(payloadOf(`stale${i}`));
    }).rejects.toThrow();
    expect(ml.state).toBe('fenced');
    await second.close();
  });

  it('tells a marker removal from any other change', async () => {
    const backends = testBackends();
    const { ml } = await trimmedLedger(backends);
    const mine = fromBinary(ManagedLedgerInfoSchema, (await backends.metadataStore.get(ml.path))!.value);
    const removed = fromBinary(ManagedLedgerInfoSchema, toBinary(ManagedLedgerInfoSchema, mine));
    removed.deletableLedgers = removed.deletableLedgers.slice(1);
    expect(isCollectorChange(mine, removed)).toBe(true);
    expect(isCollectorChange(mine, mine)).toBe(false);
    removed.ledgerInfo = removed.ledgerInfo.slice(1);
    expect(isCollectorChange(mine, removed)).toBe(false);
  });
});
