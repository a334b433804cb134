import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDevCertificates, writeDevCertificates } from '@ledgerline/security/dev-certificates';
import { Kafka, logLevel } from 'kafkajs';
import type { RunningStandalone } from './standalone.js';
import { consumeMessages, failureOf } from './testing/kafka-clients.js';
import { mutualTlsArgv, startTestStandalone } from './testing/test-standalone.js';

// kafkajs against standalone's Kafka listener given its own certificate
// (--kafka-tls-cert-file, --kafka-tls-key-file): TLS from the first byte, the
// gateway checked against the CA, and a plain-TCP client failed, not hung.
// Without Kafka files, a standalone serving gRPC over TLS serves Kafka over
// TLS with the same certificate.

/** Connects a plain-TCP admin client and asks for the topics: what it failed with. */
async function plainClientFailure(broker: string): Promise<unknown> {
  const kafka = new Kafka({
    clientId: 'plain-spec',
    brokers: [broker],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 2_000,
    retry: { retries: 1, initialRetryTime: 50 },
  });
  const admin = kafka.admin();
  try {
    return await failureOf(async () => {
      await admin.connect();
      await admin.listTopics();
    });
  } finally {
    await admin.disconnect();
  }
}

/** Whether a kafkajs failure is the connection being closed (at once, or as the cause of running out of retries). */
function closedConnection(failure: unknown): boolean {
  const { name, cause } = failure as Error;
  return [name, (cause as Error | undefined)?.name].includes('KafkaJSConnectionClosedError');
}

describe('kafkajs over a TLS Kafka listener', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let ca: Buffer;
  let broker: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-tls-'));
    const files = await writeDevCertificates(
      join(dir, 'certs'),
      await createDevCertificates({ names: ['kafka-gateway'] }),
    );
    ca = readFileSync(files.caCert);
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--group-initial-rebalance-delay-ms',
      '0',
      '--kafka-tls-cert-file',
      files.leaves['kafka-gateway']!.cert,
      '--kafka-tls-key-file',
      files.leaves['kafka-gateway']!.key,
    ]);
    broker = `localhost:${standalone.kafka!.port}`;
  });
  afterAll(async () => {
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('produces and consumes over TLS, checking the gateway against the CA', async () => {
    const kafka = new Kafka({ clientId: 'tls-spec', brokers: [broker], ssl: { ca: [ca] }, logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    const consumer = kafka.consumer({ groupId: 'tls-readers' });
    await producer.connect();
    await consumer.connect();
    try {
      const [receipt] = await producer.send({
        topic: 'tls-orders',
        acks: -1,
        messages: [
          { key: 'k1', value: 'one' },
          { key: 'k2', value: 'two' },
          { key: 'k3', value: 'three' },
        ],
      });
      expect(receipt!.baseOffset).toBe('0');
      await consumer.subscribe({ topic: 'tls-orders', fromBeginning: true });
      const consumed = await consumeMessages(consumer, 3);
      expect(
        consumed.map(({ message }) => [message.offset, message.key?.toString(), message.value?.toString()]),
      ).toEqual([
        ['0', 'k1', 'one'],
        ['1', 'k2', 'two'],
        ['2', 'k3', 'three'],
      ]);
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
    }
  });

  it('fails a plain-TCP client with a connection error', async () => {
    expect(closedConnection(await plainClientFailure(broker))).toBe(true);
  });
});

describe('a standalone serving gRPC over TLS, without Kafka TLS files', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let ca: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-tls-default-'));
    const tls = await mutualTlsArgv(join(dir, 'certs'));
    ca = tls.ca;
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', tls.argv);
  });
  afterAll(async () => {
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves Kafka over TLS with the service certificate, and fails a plain-TCP client', async () => {
    const broker = `localhost:${standalone.kafka!.port}`;
    expect(standalone.kafka!.server.secure).toBe(true);
    const kafka = new Kafka({
      clientId: 'tls-default',
      brokers: [broker],
      ssl: { ca: [ca] },
      logLevel: logLevel.NOTHING,
    });
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    try {
      const [receipt] = await producer.send({ topic: 'tls-default', acks: -1, messages: [{ value: 'one' }] });
      expect(receipt!.baseOffset).toBe('0');
    } finally {
      await producer.disconnect();
    }
    expect(closedConnection(await plainClientFailure(broker))).toBe(true);
  });
});
