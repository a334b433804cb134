import type { ManagedLedgerMetadata } from '../metadata/metadata-access.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf } from '../testing/fixtures.js';
import { sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { deferred } from '../testing/robustness/deferred.js';

const config = { minLedgerAgeMs: 0, maintenanceIntervalMs: 0, retentionTimeMs: -1, retentionSizeBytes: -1 };

/** `metadata`, telling `read` once a cursor node read has been answered. */
function tellingCursorReads(metadata: ManagedLedgerMetadata, read: () => void): ManagedLedgerMetadata {
  return new Proxy(metadata, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      if (property !== 'getCursorInfo') return value.bind(target);
      return async (...args: unknown[]) => {
        const answer: unknown = await value.apply(target, args);
        read();
        return answer;
      };
    },
  });
}

// A new owner reads the cursor nodes while it claims the managed ledger, not after (a transfer's load
// waits one round trip less). The previous owner may write a cursor after that read: the new owner claims
// each cursor by compare-and-set on the version it read, so it must read again and recover the newer state.
describe('a new owner that read a cursor node before it claimed the topic', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('recovers what the previous owner persisted after that read, and the previous owner is fenced', async () => {
    const topic = 'persistent://acme/robust/cursor-read-before-claim';
    const old = backend.owner('old');
    const first = await ManagedLedger.open(topic, old.deps, { config });
    const cursor = await first.openCursor('sub', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all([0, 1, 2].map((i) => first.append(payloadOf(`m${i}`))));
    await cursor.ack([written[0]!.position]);
    await cursor.flush();

    const next = backend.owner('new');
    const claimGate = deferred();
    const claiming = deferred();
    next.metadata.faults.push({
      call: 'putManagedLedgerInfo',
      mode: 'pass',
      until: claimGate.promise,
      reached: () => claiming.resolve(),
    });
    const cursorRead = deferred();
    const deps = { ...next.deps, metadata: tellingCursorReads(next.deps.metadata, () => cursorRead.resolve()) };
    const opening = ManagedLedger.open(topic, deps, { config });
    await Promise.all([claiming.promise, cursorRead.promise]);
    // The new owner holds the cursor node as it was and has not claimed anything yet: the old one still writes.
    await cursor.ack([written[1]!.position, written[2]!.position]);
    await cursor.flush();
    claimGate.resolve();
    const second = await opening;

    // Recovered from the node as first read, the cursor would hand out m1 and m2 again.
    expect(await second.getCursor('sub')!.readEntries({ maxEntries: 10 })).toEqual([]);
    await expect(first.append(payloadOf('late'))).rejects.toMatchObject({ code: 'ABORTED' });
    await first.close();
    await second.close();
  });
});
