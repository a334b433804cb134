import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { LocalCluster } from '@ledgerline/cluster';
import { ClusterClients } from '../index.js';

/*
 * An idempotent Kafka producer (kafkajs 2.2, acks=all) across a SIGKILL of
 * the Kafka gateway (restarted on the same port, as a pod behind a stable
 * address) and then of the writer owner of its topic. The producer resends
 * what was in flight with the same producer id, epoch and sequence numbers;
 * the owner's deduplication, keyed by them, stores each batch once. Checked
 * against the log read back through the SDK: every acknowledged message is
 * there, at the offset its acknowledgement named, and nothing is stored twice.
 */

const TOPIC = 'persistent://kafkakill/ns/orders';
const KAFKA_TOPIC = 'orders';
const BATCHES = 300;
const MESSAGES_PER_BATCH = 10;
const PROGRESS_TIMEOUT_MS = 60_000;

describe('an idempotent Kafka producer across SIGKILLs of the gateway and of the writer owner', () => {
  let cluster: LocalCluster;
  let clients: ClusterClients;
  let sdk: LedgerlineClient;
  let producer: Producer | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 2, 'kafka-gateway': 1 },
      settings: {
        'writer-owner': { LEDGERLINE_LEASE_TTL_MS: '3000' },
        'kafka-gateway': {
          LEDGERLINE_KAFKA_TENANT: 'kafkakill',
          LEDGERLINE_KAFKA_NAMESPACE: 'ns',
          LEDGERLINE_KAFKA_CREATE_NAMESPACE: 'false',
        },
      },
    });
    clients = new ClusterClients(cluster);
    await clients.createRetainedNamespace('kafkakill/ns');
    await clients.admin.createTopic({ topic: TOPIC });
    sdk = createClient({ serviceUrl: cluster.metadataTarget });
  }, 180_000);
  afterAll(async () => {
    await producer?.disconnect().catch(() => undefined);
    await sdk?.close();
    clients?.close();
    await cluster?.stop();
  }, 120_000);

  it('stores every acknowledged batch once, at the offset its acknowledgement named', async () => {
    const gateway = cluster.byRole('kafka-gateway')[0]!;
    const kafka = new Kafka({
      clientId: 'kill-spec',
      brokers: [gateway.kafkaAddress!],
      logLevel: logLevel.NOTHING,
      // Long enough to outlast a restart of the gateway and a writer failover.
      retry: { retries: 40, initialRetryTime: 100, maxRetryTime: 1_000 },
    });
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const acked: { value: string; offset: bigint }[] = [];
    const failures: string[] = [];
    const producing = (async () => {
      for (let batch = 0; batch < BATCHES; batch++) {
        const values = Array.from({ length: MESSAGES_PER_BATCH }, (_, index) => `b${batch}-m${index}`);
        try {
          const [metadata] = await producer!.send({
            topic: KAFKA_TOPIC,
            acks: -1,
            messages: values.map((value) => ({ value })),
          });
          const base = BigInt(metadata!.baseOffset!);
          values.forEach((value, index) => acked.push({ value, offset: base + BigInt(index) }));
        } catch (error) {
          failures.push(`batch ${batch}: ${String(error)}`);
        }
      }
    })();
    const ackedAtLeast = async (count: number): Promise<void> => {
      const deadline = Date.now() + PROGRESS_TIMEOUT_MS;
      while (acked.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(acked.length).toBeGreaterThanOrEqual(count);
    };

    await ackedAtLeast(50 * MESSAGES_PER_BATCH);
    expect(await gateway.stop('SIGKILL')).toBe(true);
    await gateway.start(60_000);
    const ackedAtGatewayKill = acked.length;
    await ackedAtLeast(ackedAtGatewayKill + 50 * MESSAGES_PER_BATCH);
    const owner = await cluster.ownerOf(TOPIC);
    expect(await owner.stop('SIGKILL')).toBe(true);
    const ackedAtOwnerKill = acked.length;
    await producing;

    const stored = Number((await sdk.topicStats(TOPIC))[0]!.stats.nextOffset);
    const reader = await sdk.reader({ topic: TOPIC, start: 'earliest' });
    const offsetOf = new Map<string, bigint>();
    let duplicated = 0;
    try {
      for (let index = 0; index < stored; index++) {
        const message = await reader.readNext();
        const value = Buffer.from(message.payload).toString();
        if (offsetOf.has(value)) duplicated++;
        offsetOf.set(value, message.offset);
      }
    } finally {
      await reader.close();
    }
    const lost = acked.filter((ack) => !offsetOf.has(ack.value)).length;
    const misplaced = acked.filter((ack) => offsetOf.has(ack.value) && offsetOf.get(ack.value) !== ack.offset).length;
    console.log(
      `idempotent Kafka producer: faults injected 2 (gateway SIGKILLed and restarted after ${ackedAtGatewayKill} acks, ` +
        `writer owner SIGKILLed after ${ackedAtOwnerKill}); ${acked.length} acknowledged of ${BATCHES * MESSAGES_PER_BATCH}, ` +
        `${failures.length} batches failed, ${stored} stored, lost ${lost}, duplicated ${duplicated}, misplaced ${misplaced}`,
    );
    expect({ lost, duplicated, misplaced }).toEqual({ lost: 0, duplicated: 0, misplaced: 0 });
    // Every batch the producer gave up on is a failure it was told of; none of them may be stored twice either.
    expect(stored).toBeLessThanOrEqual(BATCHES * MESSAGES_PER_BATCH);
    expect(acked.length).toBeGreaterThan(ackedAtOwnerKill);
  }, 300_000);
});
