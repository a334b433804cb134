import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { eventually, refusal } from '@ledgerline/testing';
import { LocalCluster, type ServiceInstance } from '@ledgerline/cluster';
import { ClusterClients, percentile, Workload } from '../index.js';

/*
 * Topic transfers between writer owner processes (PIP-307's shape) over
 * Redis and NATS: the source stops taking entries, finishes those in flight,
 * closes the ledger, hands the lease over by compare-and-set, the target
 * loads the topic, and only then are clients told (NOT_OWNER with the
 * target's address). The lease TTL is the default 10 s: nothing here may
 * wait for it.
 */

const ACKS_BETWEEN_MOVES = 100;
const PROGRESS_TIMEOUT_MS = 60_000;

describe('topic transfers between writer owner processes', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  const sdkClients: LedgerlineClient[] = [];

  function sdkClient(): LedgerlineClient {
    const client = createClient({ serviceUrl: cluster.metadataTarget, maxReconnectAttempts: 200 });
    sdkClients.push(client);
    return client;
  }

  function writers(): ServiceInstance[] {
    return cluster.byRole('writer-owner').filter((instance) => instance.running);
  }

  async function transfer(topic: string, from: ServiceInstance, to: ServiceInstance) {
    const targetInstanceId = await clients.instanceIdAt(to.address);
    return clients.controlAt(from.address).transferTopic({ topic, targetInstanceId }, { deadlineMs: 30_000 });
  }

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 3 },
      settings: { 'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '10000', LEDGERLINE_DRAIN_TIMEOUT_MS: '10000' } },
    });
    clients = new ClusterClients(cluster);
  }, 180_000);
  afterAll(async () => {
    for (const client of sdkClients) await client.close().catch(() => undefined);
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  it('moves a topic under load ten times: nothing lost or duplicated, no send fails, no lease waited for', async () => {
    const workload = await Workload.start(cluster, 'moves');
    try {
      const pauses: number[] = [];
      for (let move = 0; move < 10; move++) {
        expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
        const from = await cluster.ownerOf(workload.topic);
        const to = writers().find((instance) => instance !== from)!;
        const moved = await transfer(workload.topic, from, to);
        expect(moved.targetAddress).toBe(to.address);
        // The lease is the target's at once, and lookups name it.
        expect((await cluster.lease(workload.topic)).lease?.advertisedAddress).toBe(to.address);
        expect((await cluster.ownerOf(workload.topic)).address).toBe(to.address);
        pauses.push(Number(moved.pausedMs));
      }
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      await workload.stopProducing();
      expect(workload.failures).toEqual([]);
      expect(await workload.check()).toEqual([]);
      // The consumer followed the topic to each new owner.
      await eventually(() => workload.unconsumed() === 0, { attempts: 600, intervalMs: 100 }).catch(
        (error: unknown) => {
          throw new Error(
            `${String(error)}: ${workload.unconsumed()} acknowledged messages not received; ` +
              `consumers that stopped: ${JSON.stringify(workload.consumerStops)}`,
          );
        },
      );
      const latencies = workload.acks.map((ack) => ack.latencyMs);
      console.log(
        `10 transfers under load: ${workload.acks.length} acknowledged, 0 failed, 0 lost, 0 duplicated; ` +
          `pause per transfer p50 ${percentile(pauses, 50)} ms, max ${Math.max(...pauses)} ms; send latency ` +
          `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
          `p99.9 ${percentile(latencies, 99.9).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
      );
    } finally {
      await workload.close();
    }
  }, 300_000);

  it('keeps every batch of a producer that is mid-batch when its topic moves, once each', async () => {
    const topic = 'persistent://batches/ns/t';
    await clients.createRetainedNamespace('batches/ns');
    await clients.admin.createTopic({ topic });
    const client = sdkClient();
    const producer = await client.producer({
      topic,
      producerName: 'batcher',
      batching: { maxMessages: 50, maxDelayMs: 20 },
    });
    const sends: Array<Promise<unknown>> = [];
    const total = 6_000;
    let moved: Promise<unknown> | undefined;
    for (let index = 0; index < total; index++) {
      sends.push(producer.send(`b${index}`));
      // Batches open and in flight on the stream (coalesced requests) when the move starts.
      if (index === total / 2) {
        const from = await cluster.ownerOf(topic);
        moved = transfer(
          topic,
          from,
          writers().find((instance) => instance !== from)!,
        );
      }
      if (index % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    const results = await Promise.allSettled(sends);
    await moved;
    await producer.close();
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const reader = await client.reader({ topic, start: 'earliest' });
    const seen = new Map<string, number>();
    for (let index = 0; index < total; index++) {
      const message = await reader.readNext();
      const payload = Buffer.from(message.payload).toString();
      seen.set(payload, (seen.get(payload) ?? 0) + 1);
    }
    await reader.close();
    expect(seen.size).toBe(total);
    expect([...seen.values()].every((count) => count === 1)).toBe(true);
    expect((await client.topicStats(topic))[0]!.stats.nextOffset).toBe(BigInt(total));
  }, 180_000);

  it('keeps the topic on its owner when the target dies before loading it, without waiting for its lease', async () => {
    const workload = await Workload.start(cluster, 'dying');
    try {
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      const from = await cluster.ownerOf(workload.topic);
      const target = writers().find((instance) => instance !== from)!;
      const targetInstanceId = await clients.instanceIdAt(target.address);
      // Killed, either its session still looks live to the metadata service (the hand-over is accepted,
      // the load cannot happen, and the source takes the lease back: TRANSFER_FAILED), or the metadata
      // service has already ended it, two refused connections after its stream dropped, and refuses the
      // hand-over itself (NO_LIVE_OWNER). Which one depends on how long the entries in flight take to
      // finish here; in both the topic stays where it is.
      await target.stop('SIGKILL');
      const startedMs = Date.now();
      const refused = await refusal(
        clients.controlAt(from.address).transferTopic({ topic: workload.topic, targetInstanceId }),
      );
      expect([
        ['UNAVAILABLE', 'TRANSFER_FAILED'],
        ['FAILED_PRECONDITION', 'NO_LIVE_OWNER'],
      ]).toContainEqual([refused.code, refused.reason]);
      expect((await cluster.lease(workload.topic)).lease?.advertisedAddress).toBe(from.address);
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      const recoveredMs = (workload.firstAckSince(startedMs)?.atMs ?? NaN) - startedMs;
      await workload.stopProducing();
      expect(workload.failures).toEqual([]);
      expect(await workload.check()).toEqual([]);
      console.log(`transfer to a dead target: refused, topic kept; first ack after ${recoveredMs} ms`);
      await cluster.add('writer-owner');
    } finally {
      await workload.close();
    }
  }, 180_000);

  it('sends a client holding a stale owner address straight to the new owner, and past a dead one', async () => {
    const topic = 'persistent://stale/ns/t';
    await clients.createRetainedNamespace('stale/ns');
    await clients.admin.createTopic({ topic });
    const client = sdkClient();
    const producer = await client.producer({ topic, producerName: 'stale', batching: false });
    await producer.send('before');
    // Moved by someone else while this producer is idle: its cached owner is the old one.
    const first = await cluster.ownerOf(topic);
    const second = writers().find((instance) => instance !== first)!;
    await transfer(topic, first, second);
    // The old owner answers NOT_OWNER with the new address...
    const refused = await refusal(
      clients.topicsAt(first.address).publishOne({ message: { topic, payload: new Uint8Array([1]) } }),
    );
    expect([refused.reason, refused.details['owner_address']]).toEqual(['NOT_OWNER', second.address]);
    expect((await producer.send('after-move')).offset).toBe(1n);
    // ...and an owner that is gone (the topic moved off by a drain first) costs a lookup, not a failure.
    const third = writers().find((instance) => instance !== first && instance !== second)!;
    await transfer(topic, second, third);
    expect(await second.stop('SIGTERM', 30_000)).toBe(true);
    expect((await producer.send('after-stop')).offset).toBe(2n);
    await producer.close();
    await cluster.add('writer-owner');
  }, 180_000);

  it('drains an owner for maintenance: every topic moves off, lookups place none there, resume takes topics again', async () => {
    const workload = await Workload.start(cluster, 'drained');
    try {
      await clients.createRetainedNamespace('idle/ns');
      const idle = Array.from({ length: 12 }, (_, i) => `persistent://idle/ns/t${i}`);
      await clients.admin.createTopics({ topics: idle });
      const client = sdkClient();
      for (const topic of idle) await client.topicStats(topic);
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      const drained = await cluster.ownerOf(workload.topic);
      const held = async () => {
        let count = 0;
        for (const topic of [workload.topic, ...idle])
          if ((await cluster.lease(topic)).lease?.advertisedAddress === drained.address) count++;
        return count;
      };
      const before = await held();
      const outcome = await clients.controlAt(drained.address).drainOwner({}, { deadlineMs: 60_000 });
      // It also holds topics of the tests before this one.
      expect(outcome.transferred).toBeGreaterThanOrEqual(before);
      expect(outcome.unloaded).toBe(0);
      expect(await held()).toBe(0);
      // New topics are not placed on a draining owner.
      // 24 topics: with three owners, the chance that placement gives none of them to one owner is (2/3)^24, 6e-5.
      const fresh = Array.from({ length: 24 }, (_, i) => `persistent://idle/ns/fresh${i}`);
      await clients.admin.createTopics({ topics: fresh });
      for (const topic of fresh) expect(await clients.ownerAddress(topic)).not.toBe(drained.address);
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      await clients.controlAt(drained.address).drainOwner({ resume: true });
      const placedThere: string[] = [];
      for (const topic of fresh) if ((await clients.ownerAddress(topic)) === drained.address) placedThere.push(topic);
      expect(placedThere.length).toBeGreaterThan(0);
      await workload.stopProducing();
      expect(workload.failures).toEqual([]);
      expect(await workload.check()).toEqual([]);
      console.log(
        `maintenance drain: ${outcome.transferred} topic(s) moved, ${workload.acks.length} acknowledged, 0 failed`,
      );
    } finally {
      await workload.close();
    }
  }, 180_000);

  it('rolls every writer owner with SIGTERM under load (a new one first, as maxSurge 1 does): nothing lost, no send fails', async () => {
    const workload = await Workload.start(cluster, 'rolling');
    try {
      const old = writers();
      const moves: string[] = [];
      const startedMs = Date.now();
      for (const victim of old) {
        expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
        await cluster.add('writer-owner');
        const owned = (await cluster.ownerOf(workload.topic)) === victim;
        expect(await victim.stop('SIGTERM', 30_000)).toBe(true);
        expect((await victim.exited)?.code).toBe(0);
        if (owned) moves.push(`${victim.address} -> ${(await cluster.ownerOf(workload.topic)).address}`);
      }
      const rolledMs = Date.now() - startedMs;
      expect(await workload.waitForAcks(ACKS_BETWEEN_MOVES, PROGRESS_TIMEOUT_MS)).toBe(true);
      await workload.stopProducing();
      expect(workload.failures).toEqual([]);
      expect(await workload.check()).toEqual([]);
      await eventually(() => workload.unconsumed() === 0, { attempts: 600, intervalMs: 100 });
      const latencies = workload.acks.map((ack) => ack.latencyMs);
      console.log(
        `rolling SIGTERM restart of ${old.length} writer owners in ${rolledMs} ms (the load's topic moved ` +
          `${moves.length} time(s): ${moves.join(', ')}): ${workload.acks.length} acknowledged, 0 failed, 0 lost, ` +
          `0 duplicated; send latency p50 ${percentile(latencies, 50).toFixed(1)} ms, ` +
          `p99 ${percentile(latencies, 99).toFixed(1)} ms, p99.9 ${percentile(latencies, 99.9).toFixed(1)} ms, ` +
          `p99.99 ${percentile(latencies, 99.99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
      );
    } finally {
      await workload.close();
    }
  }, 300_000);
});
