import { LedgerlineError } from '@ledgerline/errors';
import { encodeMessageEntry, KEPT_TIMESTAMP_PROPERTY } from '@ledgerline/message-format';
import type { ManagedLedgerConfigInput } from '../config.js';
import { ManagedLedger } from '../managed-ledger.js';
import { testBackends, type TestBackends } from '../testing/fixtures.js';

const TOPIC = 'persistent://acme/orders/created';

const config: ManagedLedgerConfigInput = {
  // Two entries a ledger: every lookup below crosses closed ledgers.
  maxEntriesPerLedger: 2,
  offsetIndexIntervalEntries: 1,
  minLedgerAgeMs: 0,
  maintenanceIntervalMs: 0,
  retentionTimeMs: -1,
  retentionSizeBytes: -1,
};

/** A batch whose messages carry `times` as event times; -1 as the Kafka gateway stores a record without one. */
function batch(times: number[]): Uint8Array {
  return encodeMessageEntry({
    producerName: 'p',
    sequenceId: 0n,
    publishTimeMs: 5_000_000,
    messages: times.map((time) => ({
      payload: new Uint8Array([1]),
      eventTimeMs: Math.max(time, 0),
      properties: time === -1 ? { [KEPT_TIMESTAMP_PROPERTY]: '-1' } : ({} as Record<string, string>),
    })),
  });
}

/** Appends batches of records stamped long before the broker's clock, each with its largest event time. */
async function appendPast(ml: ManagedLedger, backends: TestBackends, batches: number[][], withMax = true) {
  for (const times of batches) {
    backends.clock.advance(10);
    const options = withMax ? { maxEventTimeMs: Math.max(0, ...times) } : undefined;
    await ml.append(batch(times), times.length, options);
  }
}

const byEventTime = async (ml: ManagedLedger, time: number) =>
  (await ml.findPositionByTime(time, { byEventTime: true })).offset;

describe('ManagedLedger.findPositionByTime by event time', () => {
  it('answers with the first record stamped at or after the time, across closed ledgers and after a reopen', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    // Offsets 0-1, 2-4 | 5, 6-7 | 8-9 (open): every entry is stored well after 1,000,000.
    await appendPast(ml, backends, [[100, 200], [300, -1, 400], [500], [600, 650], [700, 900]]);
    expect(ml.ledgers().length).toBe(3);
    const expectations: [number, number][] = [
      [150, 1],
      [201, 2],
      [350, 4],
      [401, 5],
      [620, 7],
      [651, 8],
      [800, 9],
      [901, 10],
    ];
    for (const [time, offset] of expectations)
      expect({ time, offset: await byEventTime(ml, time) }).toEqual({ time, offset });
    // By broker time every one of those times is before the first entry.
    expect((await ml.findPositionByTime(350)).offset).toBe(0);
    expect((await ml.findPositionByTime(901)).offset).toBe(0);
    await ml.close();
    // Reopened, the closed ledgers are found through their stored LedgerInfo and index.
    const reopened = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    for (const [time, offset] of expectations) expect(await byEventTime(reopened, time)).toBe(offset);
    await reopened.close();
  });

  it('counts entries appended without their largest event time by broker time, as before, and never errs on them', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    await appendPast(ml, backends, [[100], [200, 300]], false);
    const brokerTimeOfSecond = backends.clock.nowMs;
    await appendPast(ml, backends, [[400]]);
    // The first two entries are found by their broker times, the last by its record's time.
    expect(await byEventTime(ml, 250)).toBe(0);
    expect(await byEventTime(ml, brokerTimeOfSecond)).toBe(1);
    expect(await byEventTime(ml, 350)).toBe(0);
    expect((await ml.findPositionByTime(brokerTimeOfSecond + 1, { byEventTime: true })).pastEnd).toBe(true);
    await ml.close();
  });

  it('refuses a largest event time that is not a non-negative integer', async () => {
    const backends = testBackends();
    const ml = await ManagedLedger.open(TOPIC, backends.deps(), { config });
    for (const maxEventTimeMs of [-1, 1.5]) {
      const error = await ml.append(batch([1]), 1, { maxEventTimeMs }).catch((caught: unknown) => caught);
      expect((error as LedgerlineError).reason).toBe('INVALID_EVENT_TIME');
    }
    await ml.close();
  });
});
