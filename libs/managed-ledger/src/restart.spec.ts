import fc from 'fast-check';
import type { ManagedLedgerConfigInput } from './config.js';
import type { AppendResult } from './entry.js';
import { canonicalMarkDelete } from './ledgers/ledger-views.js';
import { ManagedLedger } from './managed-ledger.js';
import { payloadOf, testBackends, textOf, type TestBackends } from './testing/fixtures.js';
import { InMemoryLedgerStore } from './testing/in-memory-ledger-store.js';

const TOPIC = 'persistent://acme/restart/r';
const config: ManagedLedgerConfigInput = {
  maxEntriesPerLedger: 7,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
  writeRetryInitialBackoffMs: 1,
  writeRetryMaxBackoffMs: 2,
  // Small limits so cursor states spill into chunked cursor-ledger snapshots.
  cursor: {
    snapshotIntervalMs: 0,
    inlineSnapshotMaxBytes: 64,
    snapshotMaxEntrySizeBytes: 1024,
    maxSnapshotsPerLedger: 3,
  },
};

type Command =
  | { kind: 'append'; count: number; batch: number }
  | { kind: 'appendInFlightThenCrash'; count: number }
  | { kind: 'ack'; seed: number; share: number }
  | { kind: 'fault'; mode: 'before' | 'after' }
  | { kind: 'restart'; clean: boolean };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    count: fc.integer({ min: 1, max: 40 }),
    batch: fc.integer({ min: 1, max: 5 }),
  }),
  fc.record({ kind: fc.constant('appendInFlightThenCrash' as const), count: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ kind: fc.constant('ack' as const), seed: fc.nat(), share: fc.integer({ min: 1, max: 9 }) }),
  fc.record({ kind: fc.constant('fault' as const), mode: fc.constantFrom('before' as const, 'after' as const) }),
  fc.record({ kind: fc.constant('restart' as const), clean: fc.boolean() }),
);

/** Everything acknowledged so far, and the model of what the cursor consumed. */
class Model {
  readonly acknowledged: AppendResult[] = [];
  readonly payloads = new Map<string, string>();
  private counter = 0;
  nextPayload(): string {
    return `e${this.counter++}`;
  }
}

async function readAll(ml: ManagedLedger) {
  const out = [];
  const first = ml.ledgers()[0];
  let from = { ledgerId: first?.ledgerId ?? 0, entryId: 0 };
  for (let page = 0; page < 10_000; page++) {
    const entries = await ml.readEntries(from, { maxEntries: 500 });
    if (entries.length === 0) break;
    out.push(...entries);
    const last = entries[entries.length - 1]!.position;
    from = { ledgerId: last.ledgerId, entryId: last.entryId + 1 };
  }
  return out;
}

async function run(commands: Command[]): Promise<void> {
  const store = new InMemoryLedgerStore();
  const backends: TestBackends = testBackends({ ledgerStore: store });
  const model = new Model();
  let ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
  let cursor = await ml.openCursor('sub', { start: { initialPosition: 'earliest' } });
  const restart = async (clean: boolean) => {
    // An injected fault may hit the cursor ledger too: a failed snapshot is retried, as the cursor itself would.
    for (let attempt = 0; attempt < 5; attempt++) {
      if (
        await cursor.flush().then(
          () => true,
          () => false,
        )
      )
        break;
    }
    const before = cursor.exportState();
    const old = ml;
    if (clean) await old.close();
    ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    if (!clean) await old.close();
    cursor = ml.getCursor('sub')!;
    const after = cursor.exportState();
    // Ledgers may have changed (an empty one dropped): compare what is consumed, in today's spelling.
    expect(after.markDelete).toEqual(canonicalMarkDelete(ml.ledgers(), before.markDelete));
    expect(after.ackedRanges).toEqual(before.ackedRanges);
  };
  for (const command of commands) {
    if (command.kind === 'append') {
      const appends = Array.from({ length: command.count }, () => {
        const text = model.nextPayload();
        return ml.append(payloadOf(text), command.batch).then((r) => (model.payloads.set(`${r.firstOffset}`, text), r));
      });
      model.acknowledged.push(...(await Promise.all(appends)));
    } else if (command.kind === 'appendInFlightThenCrash') {
      store.appendDelayMs = 1;
      const inFlight = Array.from({ length: command.count }, () => {
        const text = model.nextPayload();
        return ml.append(payloadOf(text)).then(
          (r) => (model.acknowledged.push(r), model.payloads.set(`${r.firstOffset}`, text)),
          (err: unknown) => expect(err).toMatchObject({ code: 'ABORTED' }),
        );
      });
      await new Promise((resolve) => setTimeout(resolve, 2));
      const old = ml;
      ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
      await Promise.all(inFlight);
      await old.close();
      cursor = ml.getCursor('sub')!;
      store.appendDelayMs = 0;
    } else if (command.kind === 'ack') {
      let seed = command.seed;
      const chosen = model.acknowledged.filter(
        () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 10 < command.share),
      );
      cursor.ack(chosen.map((r) => r.position));
    } else if (command.kind === 'fault') {
      store.appendFaults.push(command.mode);
    } else {
      await restart(command.clean);
    }
  }
  await restart(false);
  // The log holds exactly the acknowledged entries, with offsets from 0 and no gap or duplicate.
  model.acknowledged.sort((a, b) => a.firstOffset - b.firstOffset);
  const entries = await readAll(ml);
  expect(entries.map((e) => e.firstOffset)).toEqual(model.acknowledged.map((r) => r.firstOffset));
  expect(entries.map((e) => textOf(e.payload))).toEqual(
    model.acknowledged.map((r) => model.payloads.get(`${r.firstOffset}`)),
  );
  let next = 0;
  for (const entry of entries) {
    expect(entry.firstOffset).toBe(next);
    next = entry.lastOffset + 1;
  }
  const tail = await ml.append(payloadOf('tail'));
  expect(tail.firstOffset).toBe(next);
  await ml.close();
}

describe('restart at random points', () => {
  it('keeps offsets continuous, loses no acknowledged entry and recovers the cursor', async () => {
    await fc.assert(fc.asyncProperty(fc.array(commandArbitrary, { minLength: 1, maxLength: 12 }), run), {
      numRuns: 25,
    });
  }, 60_000);
});
