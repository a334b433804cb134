import { createClient, type LedgerlineClient } from '@ledgerline/client';
import type { GetBalancerStatusResponse } from '@ledgerline/proto';
import { eventually } from '@ledgerline/testing';
import { LocalCluster, READ_ONLY_GROUP } from '@ledgerline/cluster';
import { ClusterClients, QUICK_BALANCER_SETTINGS } from '../index.js';

/*
 * The balancer and read-only owners as processes (issue 28: read-only owners
 * are balanced the same way, for their consumers). One read-only owner holds
 * every reader topic; two more join, and the balancer moves reader topics to
 * them by transfer until each is within ±10% of the mean (the band writer
 * owners keep, issue 43), while an SDK consumer of one reader topic receives
 * every message published meanwhile, none again after its ack was confirmed.
 * Then the balancer runs further rounds and none of them moves a reader topic:
 * no flapping, counted by moves, not timed.
 */

const TOPICS = 30;
const MESSAGES = 400;
const BALANCED_GROUP = `${READ_ONLY_GROUP} (read-only)`;
/** Within ±10% of the mean: QUICK_BALANCER_SETTINGS's band, the balancer's default. */
const BAND = 0.1;
/** Rounds watched after the group settled, each of which must move nothing (past the shedding window of 2). */
const QUIET_ROUNDS = 6;

describe('the balancer: one read-only owner, then three', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  let sdk: LedgerlineClient | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1, 'readonly-owner': 1 },
      settings: {
        metadata: { ...QUICK_BALANCER_SETTINGS },
        'readonly-owner': { LEDGERLINE_LAC_FALLBACK_MS: '50', LEDGERLINE_CURSOR_SYNC_INTERVAL_MS: '20' },
      },
    });
    clients = new ClusterClients(cluster);
  }, 180_000);
  afterAll(async () => {
    await sdk?.close().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  /** The read-only owners the balancer saw last, with their reader topic counts. */
  async function readOnlyCounts(): Promise<{ counts: number[]; status: GetBalancerStatusResponse }> {
    const status = await clients.admin.getBalancerStatus({});
    const counts = status.owners.filter((owner) => owner.group === BALANCED_GROUP).map((owner) => owner.topics);
    return { counts, status };
  }

  it('moves reader topics to read-only owners that join, and the consumer of one follows without a loss', async () => {
    await clients.createRetainedNamespace('rb/writer');
    await clients.admin.createNamespace({ namespace: 'rb/reader', policies: { ownerGroup: READ_ONLY_GROUP } });
    await clients.admin.setWriterNamespace({ namespace: 'rb/reader', writerNamespace: 'rb/writer' });
    const locals = Array.from({ length: TOPICS }, (_, i) => `t${i}`);
    await clients.admin.createTopics({ topics: locals.map((local) => `persistent://rb/writer/${local}`) });
    sdk = createClient({ serviceUrl: cluster.metadataTarget, maxReconnectAttempts: 200 });
    // Asking a reader topic's owner for its stats loads it there (and leases it): all on the one read-only owner.
    for (const local of locals) await sdk.topicStats(`persistent://rb/reader/${local}`);
    const consumer = await sdk.subscribe({
      topic: 'persistent://rb/reader/t0',
      subscription: 'follow',
      initialPosition: 'earliest',
      ackReceipts: true,
    });
    const producer = await sdk.producer({ topic: 'persistent://rb/writer/t0', producerName: 'rb', batching: false });
    const received: string[] = [];
    const ackConfirmed = new Set<string>();
    let redeliveredAfterAck = 0;
    const consuming = (async () => {
      while (received.length < MESSAGES) {
        const message = await consumer.receive();
        const payload = Buffer.from(message.payload).toString();
        if (ackConfirmed.has(payload)) redeliveredAfterAck++;
        received.push(payload);
        consumer.ack(message).then(
          () => void ackConfirmed.add(payload),
          () => undefined,
        );
      }
    })();
    await eventually(async () => (await readOnlyCounts()).counts.join() === String(TOPICS), {
      attempts: 60,
      intervalMs: 500,
      description: 'the balancer seeing every reader topic on the one read-only owner',
    });

    const startedMs = Date.now();
    const publishing = (async () => {
      for (let i = 0; i < MESSAGES; i++) {
        await producer.send(`m${i}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    await cluster.add('readonly-owner');
    await cluster.add('readonly-owner');
    let last: GetBalancerStatusResponse | undefined;
    await eventually(
      async () => {
        const { counts, status } = await readOnlyCounts();
        last = status;
        const mean = TOPICS / 3;
        return counts.length === 3 && counts.every((count) => Math.abs(count - mean) <= BAND * mean);
      },
      { attempts: 120, intervalMs: 500, description: 'every read-only owner within ±10% of the mean' },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}: last status ${JSON.stringify(last?.owners)}`);
    });
    const settledMs = Date.now() - startedMs;
    // No flapping: the rounds after the group settled move no reader topic, and keep it within the band.
    const settled = last!;
    let later = settled;
    await eventually(
      async () => {
        later = (await readOnlyCounts()).status;
        return Number(later.rounds) >= Number(settled.rounds) + QUIET_ROUNDS;
      },
      { attempts: 120, intervalMs: 500, description: `${QUIET_ROUNDS} more balancer rounds` },
    );
    expect(Number(later.movesTotal)).toBe(Number(settled.movesTotal));
    const laterCounts = later.owners.filter((owner) => owner.group === BALANCED_GROUP).map((owner) => owner.topics);
    expect(laterCounts.every((count) => Math.abs(count - TOPICS / 3) <= (BAND * TOPICS) / 3)).toBe(true);
    await publishing;
    await consuming;
    const moves = last!.recentMoves.filter((move) => move.topic.startsWith('persistent://rb/reader/'));
    expect(moves.length).toBeGreaterThan(0);
    expect(moves.filter((move) => move.outcome !== 'moved')).toEqual([]);
    // Every message, in order; any redelivery is of one whose ack was not yet confirmed.
    expect([...new Set(received)]).toEqual(Array.from({ length: MESSAGES }, (_, i) => `m${i}`));
    expect(redeliveredAfterAck).toBe(0);
    console.log(
      `read-only balancer: ${TOPICS} reader topics on 1 read-only owner -> 3 ` +
        `${JSON.stringify((await readOnlyCounts()).counts)} in ${settledMs} ms, ${moves.length} moves; ` +
        `the consumer of t0 (${moves.some((move) => move.topic.endsWith('/t0')) ? 'moved' : 'not moved'}) received ` +
        `${received.length} deliveries of ${MESSAGES} messages, 0 redelivered after ack; ` +
        `${QUIET_ROUNDS} rounds after it moved nothing`,
    );
    await consumer.close();
    await producer.close();
  }, 300_000);
});
