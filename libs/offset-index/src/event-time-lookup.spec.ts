import fc from 'fast-check';
import { create } from '@bufbuild/protobuf';
import { LedgerInfoSchema } from '@ledgerline/proto';
import { encodeEntry } from './entry-framing.js';
import { findPositionByEventTime, findPositionByTime } from './find-position.js';
import { ledgerInfoOffsetFields, topicLedgerFromLedgerInfo } from './ledger-info-fields.js';
import { LedgerOffsetIndex } from './ledger-offset-index.js';
import type { MessagePosition, StoredEntry } from './positions.js';
import type { MessageTimes } from './resolve-in-entries.js';
import { CountingReader } from './testing/test-topic.js';
import { TopicOffsetIndex } from './topic-offset-index.js';
import { topicLedgerFromIndex, type TopicLedger } from './topic-ledger.js';

/** One entry of a model topic: its messages' own times (-1: none) and whether its publisher gave their largest. */
interface EventEntry {
  times: number[];
  brokerTimeMs: number;
  withMax: boolean;
  /** What the publisher gave as the largest, when it is not the messages' largest (a publisher's mistake). */
  recordedMax?: number;
}

/** How a closed ledger reaches the topic index: its LedgerInfo with the stored index, or the summary alone. */
type Closed = 'info-with-index' | 'info-without-index';

interface Built {
  index: TopicOffsetIndex;
  reader: CountingReader;
  /** Every message in topic order with its position and the time a lookup by event time counts it with. */
  messages: { position: MessagePosition; timeMs: number }[];
  end: MessagePosition;
}

/** The test payload: the messages' times as JSON, which `times` below decodes as a real payload decoder would. */
const times: MessageTimes = (payload) => JSON.parse(Buffer.from(payload).toString('utf8')) as number[];

function build(ledgers: EventEntry[][], closed: Closed[], entriesPerPoint = 2): Built {
  const store = new Map<number, StoredEntry[]>();
  const topicLedgers: TopicLedger[] = [];
  const messages: Built['messages'] = [];
  let nextOffset = 0;
  ledgers.forEach((entries, position) => {
    const ledgerId = 1 + position;
    const index = new LedgerOffsetIndex({ firstOffset: nextOffset, entriesPerPoint });
    const stored: StoredEntry[] = entries.map((entry, entryId) => {
      const lastOffset = nextOffset + entry.times.length - 1;
      // The publisher's largest, with -1 (no message has a time) recorded as 0, as the writer owner records it.
      const maxEventTimeMs = entry.withMax ? (entry.recordedMax ?? Math.max(0, ...entry.times)) : undefined;
      const payload = Buffer.from(JSON.stringify(entry.times));
      const data = encodeEntry({ brokerTimestamp: entry.brokerTimeMs, index: lastOffset, maxEventTimeMs }, payload);
      index.append(lastOffset, entry.brokerTimeMs, data.length, maxEventTimeMs);
      entry.times.forEach((time, batchIndex) => {
        const offset = nextOffset + batchIndex;
        const position = { ledgerId, entryId, batchIndex, offset, beforeEarliest: false, pastEnd: false };
        messages.push({ position, timeMs: entry.withMax ? time : entry.brokerTimeMs });
      });
      nextOffset = lastOffset + 1;
      return { entryId, data };
    });
    store.set(ledgerId, stored);
    topicLedgers.push(
      position === ledgers.length - 1
        ? topicLedgerFromIndex(ledgerId, index)
        : closedLedger(ledgerId, index, closed[position]!),
    );
  });
  const last = topicLedgers[topicLedgers.length - 1]!;
  const end = {
    ledgerId: last.ledgerId,
    entryId: last.entries,
    batchIndex: 0,
    offset: nextOffset,
    beforeEarliest: false,
    pastEnd: true,
  };
  return { index: new TopicOffsetIndex(topicLedgers), reader: new CountingReader(store), messages, end };
}

/** A closed ledger as a managed ledger stores it: LedgerInfo fields 100..105, through the stored index's bytes. */
function closedLedger(ledgerId: number, index: LedgerOffsetIndex, closed: Closed): TopicLedger {
  const fields = ledgerInfoOffsetFields(index);
  const info = create(LedgerInfoSchema, {
    ledgerId: BigInt(ledgerId),
    ...fields,
    offsetIndex: closed === 'info-with-index' ? fields.offsetIndex : new Uint8Array(0),
  });
  return topicLedgerFromLedgerInfo(info);
}

/** Kafka's answer: the first message whose time reaches the asked one (-1 never does); time 0 is the earliest. */
function expected(built: Built, timestampMs: number): MessagePosition {
  if (timestampMs === 0 && built.messages.length > 0) return built.messages[0]!.position;
  return built.messages.find((message) => message.timeMs >= timestampMs)?.position ?? built.end;
}

const entryArbitrary: fc.Arbitrary<EventEntry> = fc.record({
  times: fc.array(fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 60 })), { minLength: 1, maxLength: 4 }),
  brokerTimeMs: fc.integer({ min: 0, max: 60 }),
  withMax: fc.boolean(),
});

const topicArbitrary = fc.record({
  ledgers: fc.array(fc.array(entryArbitrary, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
  closed: fc.array(fc.constantFrom<Closed>('info-with-index', 'info-without-index'), { minLength: 4, maxLength: 4 }),
  entriesPerPoint: fc.integer({ min: 1, max: 4 }),
});

describe('findPositionByEventTime', () => {
  it('answers every time with the first message whose own time reaches it, across entries and closed ledgers', async () => {
    await fc.assert(
      fc.asyncProperty(topicArbitrary, async ({ ledgers, closed, entriesPerPoint }) => {
        const built = build(ledgers, closed, entriesPerPoint);
        for (let timestampMs = 0; timestampMs <= 62; timestampMs++) {
          const found = await findPositionByEventTime(built.index, built.reader, timestampMs, times);
          expect({ timestampMs, found }).toEqual({ timestampMs, found: expected(built, timestampMs) });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('finds records stamped in the past that a lookup by broker time passes over', async () => {
    // Two closed ledgers and an open one, all stored at broker time 1000+, holding records stamped 100..900.
    const built = build(
      [
        [
          { times: [100, 150], brokerTimeMs: 1000, withMax: true },
          { times: [200], brokerTimeMs: 1001, withMax: true },
        ],
        [
          { times: [300, -1, 400], brokerTimeMs: 1002, withMax: true },
          { times: [500], brokerTimeMs: 1003, withMax: true },
        ],
        [{ times: [800, 900], brokerTimeMs: 1004, withMax: true }],
      ],
      ['info-with-index', 'info-without-index'],
    );
    const byEventTime = async (time: number) =>
      (await findPositionByEventTime(built.index, built.reader, time, times)).offset;
    expect(await byEventTime(120)).toBe(1);
    expect(await byEventTime(350)).toBe(5);
    expect(await byEventTime(401)).toBe(6);
    expect(await byEventTime(850)).toBe(8);
    expect((await findPositionByEventTime(built.index, built.reader, 901, times)).pastEnd).toBe(true);
    // By broker time every one of them answers the first entry.
    expect((await findPositionByTime(built.index, built.reader, 350)).offset).toBe(0);
  });

  it('decodes no entry whose largest event time is below the time asked', async () => {
    const decoded: number[] = [];
    const counting: MessageTimes = (payload, brokerTimeMs) => {
      const found = times(payload, brokerTimeMs);
      decoded.push(found[0]!);
      return found;
    };
    const entries = [10, 20, 30, 40, 50].map((time) => ({ times: [time, time + 1], brokerTimeMs: 5, withMax: true }));
    const built = build([entries], [], 8);
    expect((await findPositionByEventTime(built.index, built.reader, 41, counting)).offset).toBe(7);
    expect(decoded).toEqual([40]);
  });

  it("passes over an entry whose recorded largest event time overstates its messages', to the next ledger", async () => {
    const built = build(
      [
        [
          { times: [10], brokerTimeMs: 5, withMax: true, recordedMax: 100 },
          { times: [20], brokerTimeMs: 5, withMax: true },
        ],
        [{ times: [30, 60], brokerTimeMs: 5, withMax: true }],
      ],
      ['info-with-index'],
      1,
    );
    const found = await findPositionByEventTime(built.index, built.reader, 50, times);
    expect([found.ledgerId, found.entryId, found.batchIndex, found.offset]).toEqual([2, 0, 1, 3]);
    expect((await findPositionByEventTime(built.index, built.reader, 70, times)).pastEnd).toBe(true);
  });

  it('counts entries written without their largest event time by their broker time, as before', async () => {
    const built = build(
      [
        [
          { times: [5000], brokerTimeMs: 100, withMax: false },
          { times: [7000, 50], brokerTimeMs: 200, withMax: false },
          { times: [60, 70], brokerTimeMs: 300, withMax: true },
        ],
      ],
      [],
    );
    const offsetAt = async (time: number) =>
      (await findPositionByEventTime(built.index, built.reader, time, times)).offset;
    expect(await offsetAt(150)).toBe(1);
    expect(await offsetAt(65)).toBe(0);
    expect(await offsetAt(201)).toBe(5);
  });
});
