import { execFile } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';
import { consumeMessages } from './testing/kafka-clients.js';
import { kafkaStandaloneRun } from './testing/kafka-standalone-run.js';
import { take } from './testing/take-messages.js';

// Kafka's limits and edge cases of what it accepts, as real clients meet
// them against standalone's gateway: each answered with Kafka's own error
// code and nothing stored, or accepted and read back as Kafka returns it.

const PYTHON = '/usr/bin/python3';
const RUN_TIMEOUT_MS = 60_000;

function kcat(args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'kcat',
      args,
      { timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`kcat ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
    child.stdin?.end(input ?? '');
  });
}

/** Runs a kafka-python snippet given the broker as sys.argv[1]; its stdout's last line, parsed as JSON. */
function python(script: string, broker: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ['-c', script, broker], { timeout: RUN_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kafka-python failed: ${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}

describe('Kafka limits against standalone', () => {
  const kafka = kafkaStandaloneRun('kafka-limits');
  const kafkajs = (): Kafka =>
    new Kafka({
      clientId: 'limits-spec',
      brokers: [kafka.broker],
      logLevel: logLevel.NOTHING,
      retry: { retries: 2, initialRetryTime: 50 },
    });

  describe('message.max.bytes', () => {
    // Kafka's default, which the gateway serves: a batch of one record without key or headers whose value takes
    // this many bytes is exactly that large (61 bytes of batch header, 11 of record framing for such a value).
    const MESSAGE_MAX_BYTES = 1_048_588;
    const VALUE_AT_LIMIT = MESSAGE_MAX_BYTES - 72;

    it('accepts a batch exactly at message.max.bytes, refuses one a byte over with MESSAGE_TOO_LARGE and stores nothing of it (kafkajs)', async () => {
      const client = kafkajs();
      const producer = client.producer({ allowAutoTopicCreation: true, retry: { retries: 0 } });
      await producer.connect();
      const admin = client.admin();
      await admin.connect();
      try {
        const [atLimit] = await producer.send({
          topic: 'max-sized',
          messages: [{ value: Buffer.alloc(VALUE_AT_LIMIT, 1), timestamp: '1700000000000' }],
        });
        expect(atLimit).toMatchObject({ errorCode: 0, baseOffset: '0' });
        const over = await producer
          .send({
            topic: 'max-sized',
            messages: [{ value: Buffer.alloc(VALUE_AT_LIMIT + 1, 1), timestamp: '1700000000000' }],
          })
          .then(
            () => 'stored',
            (error: { type?: string }) => error.type,
          );
        expect(over).toBe('MESSAGE_TOO_LARGE');
        expect(await admin.fetchTopicOffsets('max-sized')).toMatchObject([{ partition: 0, high: '1', low: '0' }]);
        const described = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [
            { type: 2, name: 'max-sized', configNames: ['max.message.bytes'] },
            { type: 4, name: '1', configNames: ['message.max.bytes'] },
          ],
        });
        expect(described.resources.map((resource) => resource.configEntries.map((entry) => entry.configValue))).toEqual(
          [[String(MESSAGE_MAX_BYTES)], [String(MESSAGE_MAX_BYTES)]],
        );
      } finally {
        await admin.disconnect();
        await producer.disconnect();
      }
    });
  });

  describe('keys', () => {
    it('stores keys far above 64 KiB, text and binary, and reads them back byte for byte (kafka-python)', async () => {
      const answer = await python(
        `
import json, sys, os
from kafka import KafkaProducer, KafkaConsumer
text = b'k' * (300 * 1024)
binary = b'\\xff\\xfe' + os.urandom(200 * 1024)
producer = KafkaProducer(bootstrap_servers=sys.argv[1])
producer.send('long-keys', b'text', key=text).get(timeout=20)
producer.send('long-keys', b'binary', key=binary).get(timeout=20)
producer.close()
consumer = KafkaConsumer('long-keys', bootstrap_servers=sys.argv[1], auto_offset_reset='earliest',
                         consumer_timeout_ms=20000)
records = [record for _, record in zip(range(2), consumer)]
consumer.close()
print(json.dumps([records[0].key == text, records[1].key == binary]))
`,
        kafka.broker,
      );
      expect(answer).toEqual([true, true]);
    });

    it("accepts librdkafka's 99000-byte key of its test 0003_msgmaxsize (kcat)", async () => {
      await kcat(
        ['-b', kafka.broker, '-P', '-t', 'kcat-long-key', '-K', ':'],
        `${'k'.repeat(99_000)}:${'v'.repeat(996)}\n`,
      );
      const consumed = await kcat([
        '-b',
        kafka.broker,
        '-C',
        '-t',
        'kcat-long-key',
        '-o',
        'beginning',
        '-e',
        '-f',
        '%o %K %S\n',
      ]);
      expect(consumed.trim()).toBe('0 99000 996');
    });
  });

  describe('record timestamps', () => {
    it('keeps a record without a timestamp (-1) and answers it with -1, as Kafka does for CreateTime (kafkajs)', async () => {
      const client = kafkajs();
      const producer = client.producer({ allowAutoTopicCreation: true });
      await producer.connect();
      const stamped = String(Date.now() - 60_000);
      try {
        await producer.send({ topic: 'untimed', messages: [{ key: 'none', value: 'v0', timestamp: '-1' }] });
        await producer.send({ topic: 'untimed', messages: [{ key: 'epoch', value: 'v1', timestamp: '0' }] });
        await producer.send({ topic: 'untimed', messages: [{ key: 'stamped', value: 'v2', timestamp: stamped }] });
      } finally {
        await producer.disconnect();
      }
      const consumer = client.consumer({ groupId: 'untimed-readers' });
      await consumer.connect();
      await consumer.subscribe({ topic: 'untimed', fromBeginning: true });
      const got = await consumeMessages(consumer, 3, { autoCommit: false });
      await consumer.disconnect();
      expect(got.map(({ message }) => [message.key?.toString(), message.timestamp, message.headers])).toEqual([
        ['none', '-1', {}],
        ['epoch', '0', {}],
        ['stamped', stamped, {}],
      ]);
      // Through the SDK: no event time (Pulsar's 0); the Kafka timestamp is kept beside it.
      const reader = await kafka.client.reader({ topic: 'public/default/untimed', start: { offset: 0 } });
      const [none] = await take(reader, 1);
      await reader.close();
      expect(none).toMatchObject({ key: 'none', eventTime: 0, properties: { 'kafka.timestamp': '-1' } });
    });

    it('reads back -1 for a record kafka-python sent without a timestamp', async () => {
      const answer = await python(
        `
import json, sys
from kafka import KafkaProducer, KafkaConsumer
producer = KafkaProducer(bootstrap_servers=sys.argv[1])
producer.send('py-untimed', b'v', timestamp_ms=-1).get(timeout=20)
producer.close()
consumer = KafkaConsumer('py-untimed', bootstrap_servers=sys.argv[1], auto_offset_reset='earliest',
                         consumer_timeout_ms=20000)
record = next(iter(consumer))
consumer.close()
print(json.dumps({'timestamp': record.timestamp, 'type': record.timestamp_type}))
`,
        kafka.broker,
      );
      expect(answer).toEqual({ timestamp: -1, type: 0 });
    });
  });

  describe('CreateTopics', () => {
    it('refuses a topic named twice in one request with INVALID_REQUEST and creates it under neither entry (kafka-python)', async () => {
      const answer = await python(
        `
import json, sys
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import InvalidRequestError
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1])
try:
    admin.create_topics([NewTopic('dup', 1, 1), NewTopic('dup', 2, 1), NewTopic('solo', 1, 1)])
    refused = None
except InvalidRequestError as error:
    refused = type(error).__name__
topics = sorted(t for t in admin.list_topics() if t in ('dup', 'solo'))
print(json.dumps({'refused': refused, 'topics': topics}))
`,
        kafka.broker,
      );
      expect(answer).toEqual({ refused: 'InvalidRequestError', topics: ['solo'] });
    });
  });
});
