import fc from 'fast-check';
import { decodeEntry, encodeEntry } from './entry-framing.js';
import { findPositionByOffset } from './find-position.js';
import { LedgerOffsetIndex } from './ledger-offset-index.js';
import { OffsetAssigner, type AssignedOffsets } from './offset-assigner.js';
import { CountingReader } from './testing/test-topic.js';
import { TopicOffsetIndex } from './topic-offset-index.js';
import type { StoredEntry } from './positions.js';
import type { TopicLedger } from './topic-ledger.js';

type Command =
  | { kind: 'produce'; batchSize: number }
  | { kind: 'flush'; ok: boolean }
  | { kind: 'roll' }
  | { kind: 'restart'; fromLastEntry: boolean };

const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('produce' as const), batchSize: fc.integer({ min: 1, max: 6 }) }),
  },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('flush' as const), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('roll' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), fromLastEntry: fc.boolean() }) },
);

interface SimLedger {
  ledgerId: number;
  entries: StoredEntry[];
  /** Recorded when the ledger closes, from the entries it holds: what LedgerInfo.last_offset would say. */
  lastOffset?: number;
}

/**
 * A managed ledger in miniature: producers queue entries, the store appends
 * the oldest one or fails, failures roll the ledger and retry the same bytes,
 * and a restart recovers the assigner from what the store holds.
 */
class Simulation {
  readonly ledgers: SimLedger[] = [{ ledgerId: 1, entries: [] }];
  readonly queue: { offsets: AssignedOffsets; data: Uint8Array }[] = [];
  assigner = new OffsetAssigner({ maxAppendAttempts: 3, maxPendingEntries: 50 });
  clock = 1000;

  constructor() {
    this.assigner.recover(undefined, {});
  }

  run(command: Command): void {
    if (command.kind === 'produce') this.produce(command.batchSize);
    else if (command.kind === 'flush') this.flush(command.ok);
    else if (command.kind === 'roll') this.roll();
    else this.restart(command.fromLastEntry);
  }

  private produce(batchSize: number): void {
    if (this.assigner.pending.length >= 50) return;
    const offsets = this.assigner.assign(batchSize);
    const data = encodeEntry({ brokerTimestamp: this.clock++, index: offsets.index }, Uint8Array.of(batchSize));
    this.queue.push({ offsets, data });
  }

  private flush(ok: boolean): void {
    const head = this.queue[0];
    if (head === undefined) return;
    if (ok) {
      const current = this.ledgers[this.ledgers.length - 1]!;
      current.entries.push({ entryId: current.entries.length, data: head.data });
      this.assigner.acknowledge(head.offsets);
      this.queue.shift();
      return;
    }
    // As Pulsar does on a write error: keep the queued entries (and their offsets) and retry them on a new ledger.
    if (this.assigner.fail(head.offsets) === 'retry') this.roll();
    else this.restart(true);
  }

  private roll(): void {
    const current = this.ledgers[this.ledgers.length - 1]!;
    const last = current.entries[current.entries.length - 1];
    if (last !== undefined) current.lastOffset = decodeEntry(last.data).metadata?.index;
    this.ledgers.push({ ledgerId: current.ledgerId + 1, entries: [] });
  }

  /** The owner crashes: queued entries are lost (never acknowledged); the next owner recovers from the store. */
  private restart(fromLastEntry: boolean): void {
    this.queue.length = 0;
    if (!fromLastEntry) this.roll();
    const current = this.ledgers[this.ledgers.length - 1]!;
    const lastEntry = current.entries[current.entries.length - 1];
    const recorded = this.ledgers.filter((ledger) => ledger.lastOffset !== undefined && ledger !== current).at(-1);
    this.assigner = new OffsetAssigner({ maxAppendAttempts: 3, maxPendingEntries: 50 });
    this.assigner.recover(lastEntry && decodeEntry(lastEntry.data).metadata, { lastOffset: recorded?.lastOffset });
    if (fromLastEntry) this.roll();
  }

  /** Every stored entry with the offsets its metadata and batch size give it, in topic order. */
  storedOffsets(): { first: number; index: number }[] {
    return this.ledgers.flatMap((ledger) =>
      ledger.entries.map((entry) => {
        const { metadata, payload } = decodeEntry(entry.data);
        return { first: metadata!.index! - payload[0]! + 1, index: metadata!.index! };
      }),
    );
  }
}

function checkNoGapNoDuplicate(simulation: Simulation): void {
  let expected = 0;
  for (const stored of simulation.storedOffsets()) {
    expect(stored.first).toBe(expected);
    expected = stored.index + 1;
  }
  // Readers see exactly what the store holds; the next offset follows it, or follows the entries still queued.
  expect(simulation.assigner.committedEnd).toBe(expected - 1);
  const queued = simulation.queue.map((item) => item.offsets);
  expect(queued).toEqual(simulation.assigner.pending);
  expect(simulation.assigner.nextOffset).toBe(queued.length > 0 ? queued.at(-1)!.index + 1 : expected);
}

async function checkLookups(simulation: Simulation): Promise<void> {
  const ledgers: TopicLedger[] = [];
  const store = new Map<number, StoredEntry[]>();
  let nextOffset = 0;
  for (const ledger of simulation.ledgers) {
    const index = LedgerOffsetIndex.rebuild(ledger.entries, { firstOffset: nextOffset, entriesPerPoint: 3 });
    store.set(ledger.ledgerId, ledger.entries);
    const { entryCount: entries, firstOffset, lastOffset, minTimestamp, maxTimestamp } = index;
    ledgers.push({ ledgerId: ledger.ledgerId, entries, firstOffset, lastOffset, minTimestamp, maxTimestamp, index });
    nextOffset = lastOffset + 1;
  }
  const topic = new TopicOffsetIndex(ledgers);
  const stored = simulation.storedOffsets();
  for (let offset = 0; offset < nextOffset; offset++) {
    const reader = new CountingReader(store);
    const position = await findPositionByOffset(topic, reader, offset);
    const entry = stored.findIndex((candidate) => candidate.first <= offset && offset <= candidate.index);
    expect(position.offset - position.batchIndex).toBe(stored[entry]!.first);
    expect(reader.reads).toBeLessThanOrEqual(1);
  }
}

describe('OffsetAssigner against a model of a managed ledger', () => {
  it('leaves no gap and no duplicate through failed appends, ledger rolls and restarts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArbitrary, { maxLength: 120 }), async (commands) => {
        const simulation = new Simulation();
        for (const command of commands) {
          simulation.run(command);
          checkNoGapNoDuplicate(simulation);
        }
        await checkLookups(simulation);
      }),
      { numRuns: 150 },
    );
  });
});

describe('OffsetAssigner', () => {
  const ready = () => {
    const assigner = new OffsetAssigner({ maxPendingEntries: 3, maxAppendAttempts: 2 });
    assigner.recover(undefined, {});
    return assigner;
  };

  it('follows Pulsar: index is the last offset of the entry and the first message is offset 0', () => {
    const assigner = ready();
    expect(assigner.assign(1)).toEqual({ firstOffset: 0, index: 0, batchSize: 1 });
    expect(assigner.assign(5)).toEqual({ firstOffset: 1, index: 5, batchSize: 5 });
    expect(assigner.committedEnd).toBe(-1);
  });

  it('shows readers only what the store acknowledged, in order', () => {
    const assigner = ready();
    const first = assigner.assign(2);
    const second = assigner.assign(2);
    expect(() => assigner.acknowledge(second)).toThrow(
      expect.objectContaining({ code: 'INTERNAL', reason: 'OFFSETS_ACKNOWLEDGED_OUT_OF_ORDER' }),
    );
    assigner.acknowledge(first);
    expect(assigner.committedEnd).toBe(1);
    expect(assigner.pending).toEqual([second]);
  });

  it('keeps the offsets of a failed append, then asks for recovery after maxAppendAttempts', () => {
    const assigner = ready();
    const entry = assigner.assign(3);
    expect(assigner.fail(entry)).toBe('retry');
    expect(assigner.pending).toEqual([entry]);
    expect(assigner.fail(entry)).toBe('recover');
    expect(() => assigner.assign(1)).toThrow(expect.objectContaining({ reason: 'OFFSET_ASSIGNER_NEEDS_RECOVERY' }));
    assigner.recover({ brokerTimestamp: 5, index: 2 }, { lastOffset: 0 });
    expect(assigner.assign(1).firstOffset).toBe(3);
  });

  it('recovers from the larger of the last entry and the recorded ledger offsets', () => {
    const assigner = new OffsetAssigner();
    expect(() => assigner.assign(1)).toThrow(expect.objectContaining({ reason: 'OFFSET_ASSIGNER_NOT_RECOVERED' }));
    assigner.recover(undefined, { lastOffset: 41 });
    expect([assigner.nextOffset, assigner.committedEnd]).toEqual([42, 41]);
    assigner.recover({ index: 99 }, { lastOffset: 41 });
    expect(assigner.nextOffset).toBe(100);
    expect(() => assigner.recover({ brokerTimestamp: 1 }, {})).toThrow(
      expect.objectContaining({ code: 'FAILED_PRECONDITION', reason: 'ENTRY_WITHOUT_OFFSET' }),
    );
  });

  it('bounds the pending entries and the batch size', () => {
    const assigner = ready();
    for (let entry = 0; entry < 3; entry++) assigner.assign(1);
    expect(() => assigner.assign(1)).toThrow(
      expect.objectContaining({ code: 'RESOURCE_EXHAUSTED', reason: 'TOO_MANY_PENDING_ENTRIES' }),
    );
    expect(() => ready().assign(0)).toThrow(expect.objectContaining({ reason: 'INVALID_BATCH_SIZE' }));
    expect(() => new OffsetAssigner({ maxPendingEntries: 0 })).toThrow(
      expect.objectContaining({ reason: 'INVALID_ASSIGNER_OPTION' }),
    );
  });
});
