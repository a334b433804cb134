import { ManagedLedger } from '@ledgerline/managed-ledger';
import { testBackends, type TestBackends } from '@ledgerline/managed-ledger/testing';
import { DEDUP_CURSOR_NAME, Deduplication, type DedupSettings } from './deduplication.js';
import type { OwnedTopic } from './owned-topic.js';
import { ProducerFence } from './producer-fence.js';
import { openTestTopic } from './testing/test-topic.js';
import { TopicBatch } from './topic-batch.js';

const TOPIC = 'persistent://t/ns/dedup-expiry';
const HOUR_MS = 3_600_000;
const SETTINGS: DedupSettings = {
  maxProducers: 100,
  producerInactivityMs: 6 * HOUR_MS,
  snapshotIntervalEntries: 1_000,
  snapshotIntervalMs: 120_000,
};

const text = (s: string) => new TextEncoder().encode(s);

/** What deduplication says of one entry of `producer` with `sequenceId` (a new one is recorded as sent). */
function verdictOf(dedup: Deduplication, producer: string, sequenceId: bigint): string {
  const batch = new TopicBatch(
    [{ topic: TOPIC, producerName: producer, sequenceId } as never],
    new ProducerFence(),
    undefined,
  );
  return dedup.check(batch, 0, 1)[0]!.kind;
}

async function openTopic(backends: TestBackends, settings = SETTINGS): Promise<OwnedTopic> {
  return openTestTopic(TOPIC, backends, settings);
}

function publish(topic: OwnedTopic, producerName: string, sequenceId: bigint) {
  return topic.publish({
    topic: TOPIC,
    producerName,
    sequenceId,
    payload: text(`${producerName}-${sequenceId}`),
  } as never);
}

describe('deduplication state expiry (injected clock)', () => {
  let backends: TestBackends;
  let topic: OwnedTopic;
  beforeEach(async () => {
    backends = testBackends();
    topic = await openTopic(backends);
  });
  afterEach(async () => topic.unload('test finished'));

  it('forgets a producer silent for the inactivity time while a live one keeps its marks, and a reload does not bring it back', async () => {
    for (const producer of ['quiet', 'live', 'gone']) {
      expect((await publish(topic, producer, 5n)).duplicate).toBe(false);
    }
    // Five hours in, every producer is still remembered (and 'live' keeps talking).
    backends.clock.advance(5 * HOUR_MS);
    expect((await publish(topic, 'quiet', 5n)).duplicate).toBe(true);
    expect((await publish(topic, 'live', 6n)).duplicate).toBe(false);
    // 'gone' has now been silent for six hours and a minute; 'live' for one hour and a minute.
    backends.clock.advance(HOUR_MS + 60_000);
    expect((await publish(topic, 'live', 7n)).duplicate).toBe(false);
    expect((await publish(topic, 'live', 6n)).duplicate).toBe(true);
    const stored = await publish(topic, 'gone', 5n);
    expect(stored.duplicate).toBe(false);
    expect(stored.firstOffset).toBe(5);
    // A re-send was an activity: 'quiet' (seen at hour five) still has its marks.
    expect((await publish(topic, 'quiet', 4n)).duplicate).toBe(true);
    expect(topic.dedupHits).toBe(3);

    // 'gone' came back under the same name: its new mark is the one a reload recovers.
    await topic.unload('reload');
    topic = await openTopic(backends);
    expect((await publish(topic, 'gone', 5n)).duplicate).toBe(true);
    expect((await publish(topic, 'live', 7n)).duplicate).toBe(true);
    expect((await publish(topic, 'quiet', 5n)).duplicate).toBe(true);
  });

  it('drops a forgotten producer from the snapshot, so a new owner does not recover its marks', async () => {
    await publish(topic, 'gone', 9n);
    await publish(topic, 'live', 1n);
    expect(topic.dedup.producerCount).toBe(2);
    backends.clock.advance(6 * HOUR_MS + 1);
    // 'live' speaks: its entry is past the snapshot interval, so a snapshot is taken and 'gone' is dropped from it.
    await publish(topic, 'live', 2n);
    expect(topic.dedup.producerCount).toBe(1);
    await topic.unload('failover');
    topic = await openTopic(backends);
    expect(topic.dedup.producerCount).toBe(1);
    expect((await publish(topic, 'live', 2n)).duplicate).toBe(true);
    expect((await publish(topic, 'gone', 9n)).duplicate).toBe(false);
  });

  it('forgets a silent producer on its first publish after the silence, with no snapshot in between, also across a crash', async () => {
    await topic.unload('no timed snapshots');
    topic = await openTopic(backends, { ...SETTINGS, snapshotIntervalMs: 48 * HOUR_MS });
    await publish(topic, 'a', 7n);
    await topic.dedup.snapshot(topic.ledger.lastConfirmedPosition());
    backends.clock.advance(6 * HOUR_MS - 1);
    expect((await publish(topic, 'a', 7n)).duplicate).toBe(true);
    backends.clock.advance(6 * HOUR_MS + 1);
    // The producer restarted its sequence ids while forgotten: they are new again.
    const again = await publish(topic, 'a', 3n);
    expect([again.duplicate, again.firstOffset]).toEqual([false, 1]);
    expect((await publish(topic, 'a', 3n)).duplicate).toBe(true);
    // A crash before the next snapshot: the new owner has the old snapshot (7) and the log after it (3);
    // the log is the later word, as in Pulsar's replay.
    const crashed = topic;
    topic = await openTopic(backends);
    expect((await publish(topic, 'a', 3n)).duplicate).toBe(true);
    const next = await publish(topic, 'a', 4n);
    expect([next.duplicate, next.firstOffset]).toEqual([false, 2]);
    await crashed.unload('fenced by the new owner');
  });

  it('keeps at most maxProducers, forgetting the least recently active first', async () => {
    await topic.unload('smaller bound');
    topic = await openTopic(backends, { ...SETTINGS, maxProducers: 2 });
    await publish(topic, 'a', 1n);
    backends.clock.advance(1_000);
    await publish(topic, 'b', 1n);
    backends.clock.advance(1_000);
    expect((await publish(topic, 'a', 1n)).duplicate).toBe(true);
    await publish(topic, 'c', 1n);
    expect(topic.dedup.producerCount).toBe(2);
    expect((await publish(topic, 'a', 1n)).duplicate).toBe(true);
    expect((await publish(topic, 'c', 1n)).duplicate).toBe(true);
    expect((await publish(topic, 'b', 1n)).duplicate).toBe(false);
  });
});

describe('deduplication snapshots', () => {
  it('drops the snapshot mark of a producer forgotten and back whose new append failed, so a new owner does not take the old mark', async () => {
    const backends = testBackends();
    const ledger = await ManagedLedger.open(TOPIC, backends.deps());
    const dedup = await Deduplication.recover(ledger, SETTINGS, backends.clock.now);
    const { position } = await ledger.append(text('a-7'), 1);
    dedup.persisted('a', 7n, undefined);
    await dedup.snapshot(position);
    backends.clock.advance(6 * HOUR_MS + 1);
    expect(verdictOf(dedup, 'a', 3n)).toBe('new');
    dedup.failed('a', 3n);
    await dedup.snapshot(position);
    await ledger.close();
    const reopened = await ManagedLedger.open(TOPIC, backends.deps());
    const recovered = await Deduplication.recover(reopened, SETTINGS, backends.clock.now);
    expect(verdictOf(recovered, 'a', 3n)).toBe('new');
    await reopened.close();
  });

  it('keeps a snapshot taken without its write (a hand-over) when the ledger closes, marks and mark-delete both', async () => {
    const backends = testBackends();
    const ledger = await ManagedLedger.open(TOPIC, backends.deps());
    const dedup = await Deduplication.recover(ledger, SETTINGS, backends.clock.now);
    // Raw entries carry no producer: only the snapshot can tell the next owner about 'a'.
    await ledger.append(text('before'), 1);
    const { position } = await ledger.append(text('a-7'), 1);
    dedup.persisted('a', 7n, undefined);
    dedup.markSnapshot(position);
    await ledger.close();
    const reopened = await ManagedLedger.open(TOPIC, backends.deps());
    const recovered = await Deduplication.recover(reopened, SETTINGS, backends.clock.now);
    expect(verdictOf(recovered, 'a', 7n)).toBe('duplicate');
    expect(verdictOf(recovered, 'a', 8n)).toBe('new');
    // The mark-delete went out too: the new owner starts past the last entry (in its new ledger), replaying nothing.
    const markDelete = reopened.getCursor(DEDUP_CURSOR_NAME)!.markDeletePosition;
    expect(markDelete.ledgerId > position.ledgerId || markDelete.entryId >= position.entryId).toBe(true);
    await reopened.close();
  });
});
