import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveKafkaGatewaySettings, startKafkaGateway, type RunningKafkaGateway } from '@ledgerline/kafka-gateway';
import { Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import type { RunningStandalone } from './standalone.js';
import { startTestStandalone } from './testing/test-standalone.js';

describe('kafkajs against the Kafka gateway over a standalone', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let gateway: RunningKafkaGateway;
  let kafka: Kafka;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-'));
    standalone = await startTestStandalone(join(dir, 'data'));
    gateway = await startKafkaGateway({
      settings: resolveKafkaGatewaySettings({ kafkaHost: '127.0.0.1', kafkaPort: 0, groupInitialRebalanceDelayMs: 0 }),
      metadataAddress: `127.0.0.1:${standalone.grpcPort}`,
      channelSettings: {},
      logger: standalone.writer.service.logger,
    });
    kafka = new Kafka({ clientId: 'spec', brokers: [`127.0.0.1:${gateway.port}`], logLevel: logLevel.NOTHING });
  });
  afterAll(async () => {
    await gateway?.close();
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('produces and consumes with a group', async () => {
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }] });
    const producer = kafka.producer();
    await producer.connect();
    const sent = await producer.send({
      topic: 'orders',
      messages: Array.from({ length: 10 }, (_, index) => ({
        key: `k${index}`,
        value: `v${index}`,
        headers: { n: String(index) },
      })),
    });
    expect(sent.length).toBeGreaterThan(0);
    const consumer: Consumer = kafka.consumer({ groupId: 'billing' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const got: EachMessagePayload[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${got.length} messages`)), 20_000);
      void consumer
        .run({
          eachMessage: async (payload) => {
            got.push(payload);
            if (got.length === 10) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
    expect(got.map((payload) => payload.message.value?.toString()).sort()).toEqual(
      Array.from({ length: 10 }, (_, index) => `v${index}`).sort(),
    );
    await consumer.disconnect();
    await producer.disconnect();
    await admin.disconnect();
  });
});
