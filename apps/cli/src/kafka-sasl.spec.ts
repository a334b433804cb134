import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plainAuthBytes, RawKafkaClient } from '@ledgerline/kafka-gateway/testing';
import { ApiKey, KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { createToken } from '@ledgerline/security';
import { eventually } from '@ledgerline/testing';
import { Kafka, logLevel, type KafkaConfig } from 'kafkajs';
import type { RunningStandalone } from './standalone.js';
import { consumeMessages, failureOf } from './testing/kafka-clients.js';
import { mutualTlsArgv, startTestStandalone, tokenAuthArgv } from './testing/test-standalone.js';

// kafkajs against a standalone with token authentication on: its Kafka
// listener requires SASL/PLAIN `token:<jwt>` before anything else, checks the
// token at the login, and passes it on to the services, which authorize each
// call with it.

const SECRET = 'a-development-secret-of-at-least-32-bytes';

describe('kafkajs against a standalone that requires authentication', () => {
  let dir: string;
  let standalone: RunningStandalone;

  function kafka(extra: Partial<KafkaConfig> = {}): Kafka {
    return new Kafka({
      clientId: 'sasl-spec',
      brokers: [`localhost:${standalone.kafka!.port}`],
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 1, initialRetryTime: 50 },
      ...extra,
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-sasl-'));
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--group-initial-rebalance-delay-ms',
      '0',
      ...tokenAuthArgv(SECRET),
    ]);
    // The gateway's own attempt to create its namespace carries no token and is refused here; it needs none, since
    // standalone made public/default (topic auto-creation on) before any port served.
  });
  afterAll(async () => {
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes the connection of a client without SASL at its Metadata request, and serves one with token:<jwt>', async () => {
    const anonymous = kafka().admin();
    try {
      const failure = await failureOf(async () => {
        await anonymous.connect();
        await anonymous.fetchTopicMetadata({ topics: ['sasl-orders'] });
      });
      // Closed at once or, when kafkajs retried, as the cause of running out of retries.
      const { name, cause } = failure as Error;
      expect([name, (cause as Error | undefined)?.name]).toContain('KafkaJSConnectionClosedError');
    } finally {
      await anonymous.disconnect();
    }
    const token = await createToken({ subject: 'ops', secret: SECRET, expiresIn: '1h' });
    const client = kafka({ sasl: { mechanism: 'plain', username: 'ops', password: `token:${token}` } });
    const producer = client.producer({ allowAutoTopicCreation: true });
    const consumer = client.consumer({ groupId: 'sasl-readers' });
    await producer.connect();
    await consumer.connect();
    try {
      await producer.send({ topic: 'sasl-orders', acks: -1, messages: [{ value: 'a' }, { value: 'b' }] });
      await consumer.subscribe({ topic: 'sasl-orders', fromBeginning: true });
      const consumed = await consumeMessages(consumer, 2);
      expect(consumed.map(({ message }) => [message.offset, message.value?.toString()])).toEqual([
        ['0', 'a'],
        ['1', 'b'],
      ]);
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
    }
  });

  it('fails the login of a token the cluster did not sign with SASL_AUTHENTICATION_FAILED', async () => {
    const forged = await createToken({ subject: 'ops', secret: 'another-secret-of-at-least-32-bytes!!' });
    const admin = kafka({ sasl: { mechanism: 'plain', username: 'ops', password: `token:${forged}` } }).admin();
    try {
      const failure = await failureOf(() => admin.connect());
      // kafkajs shows the gateway's message only for SASL_AUTHENTICATION_FAILED (error code 58).
      expect(failure).toMatchObject({
        name: 'KafkaJSSASLAuthenticationError',
        message: expect.stringContaining('the token was refused'),
      });
    } finally {
      await admin.disconnect();
    }
  });
});

describe('kafkajs against a standalone with mutual TLS and tokens', () => {
  let dir: string;
  let standalone: RunningStandalone;
  let ca: Buffer;
  /** A Kafka name of a topic outside the gateway's own namespace. */
  const TOPIC = 'acme/books/ledger';

  function kafkaAs(role: string, token: string): Kafka {
    return new Kafka({
      clientId: 'sasl-mtls-spec',
      brokers: [`localhost:${standalone.kafka!.port}`],
      ssl: { ca: [ca] },
      sasl: { mechanism: 'plain', username: role, password: `token:${token}` },
      logLevel: logLevel.NOTHING,
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 1, initialRetryTime: 50 },
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-sasl-mtls-'));
    const tls = await mutualTlsArgv(join(dir, 'certs'));
    ca = tls.ca;
    // The gateway calls the services with this service certificate, and forwards each client's token.
    standalone = await startTestStandalone(join(dir, 'data'), 'silent', [...tls.argv, ...tokenAuthArgv(SECRET, 100)]);
    await standalone.admin.createTenant('acme');
    await standalone.admin.createNamespace('acme/books');
    await standalone.admin.createTopic('persistent://acme/books/ledger', 1);
  });
  afterAll(async () => {
    await standalone?.shutdown('test over');
    rmSync(dir, { recursive: true, force: true });
  });

  it("holds a Kafka client to its own token's rights, not to the gateway's certificate", async () => {
    const app = kafkaAs('app', await createToken({ subject: 'app', secret: SECRET, expiresIn: '1h' }));
    const admin = app.admin();
    const producer = app.producer();
    await admin.connect();
    await producer.connect();
    try {
      // Without a grant the topic is not even described to it, and nothing it sends is stored.
      expect(await failureOf(() => admin.fetchTopicMetadata({ topics: [TOPIC] }))).toMatchObject({
        type: 'TOPIC_AUTHORIZATION_FAILED',
      });
      expect(await failureOf(() => producer.send({ topic: TOPIC, acks: -1, messages: [{ value: 'x' }] }))).not.toBe(
        'succeeded',
      );
      await standalone.admin.grantPermission('acme/books', 'app', ['produce', 'consume']);
      await eventually(
        async () => (await failureOf(() => admin.fetchTopicMetadata({ topics: [TOPIC] }))) === 'succeeded',
        { description: 'the grant to reach the services' },
      );
      const [receipt] = await producer.send({ topic: TOPIC, acks: -1, messages: [{ value: 'granted' }] });
      expect(receipt).toMatchObject({ errorCode: 0, baseOffset: '0' });
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });

  it("holds the admin APIs to the token's rights: a producer-consumer may not alter configs, delete records or groups", async () => {
    await standalone.admin.grantPermission('acme/books', 'app', ['produce', 'consume']);
    /** A raw connection signed in with the role's token (raw: kafkajs's admin first asks Metadata for every topic). */
    const signedIn = async (role: string): Promise<RawKafkaClient> => {
      const client = await RawKafkaClient.open(standalone.kafka!.port, { ca: [ca] });
      await client.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
      const token = await createToken({ subject: role, secret: SECRET, expiresIn: '1h' });
      const login = await client.request(ApiKey.SaslAuthenticate, 1, {
        authBytes: plainAuthBytes(role, `token:${token}`),
      });
      expect(login).toMatchObject({ errorCode: KafkaErrorCode.NONE });
      return client;
    };
    const errorCodes = async (client: RawKafkaClient) => {
      const altered = (await client.request(ApiKey.AlterConfigs, 1, {
        resources: [{ resourceType: 2, resourceName: TOPIC, configs: [{ name: 'retention.ms', value: '-1' }] }],
        validateOnly: false,
      })) as { responses: { errorCode: number }[] };
      const deleted = (await client.request(ApiKey.DeleteRecords, 1, {
        topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, offset: -1n }] }],
        timeoutMs: 5000,
      })) as { topics: { partitions: { errorCode: number }[] }[] };
      const groups = (await client.request(ApiKey.DeleteGroups, 1, { groupsNames: ['readers'] })) as {
        results: { errorCode: number }[];
      };
      return [
        altered.responses[0]!.errorCode,
        deleted.topics[0]!.partitions[0]!.errorCode,
        groups.results[0]!.errorCode,
      ];
    };
    const app = await signedIn('app');
    const ops = await signedIn('ops');
    try {
      // The grant reached the owners once the topic is described to the role.
      await eventually(
        async () => {
          const described = (await app.request(ApiKey.Metadata, 1, { topics: [{ name: TOPIC }] })) as {
            topics: { errorCode: number }[];
          };
          return described.topics[0]!.errorCode === KafkaErrorCode.NONE;
        },
        { description: 'the grant to reach the services' },
      );
      expect(await errorCodes(app)).toEqual([
        KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED,
        KafkaErrorCode.TOPIC_AUTHORIZATION_FAILED,
        KafkaErrorCode.GROUP_AUTHORIZATION_FAILED,
      ]);
      // A super-user may: the same calls succeed with its token (the group has no commits to delete).
      expect(await errorCodes(ops)).toEqual([
        KafkaErrorCode.NONE,
        KafkaErrorCode.NONE,
        KafkaErrorCode.GROUP_ID_NOT_FOUND,
      ]);
    } finally {
      app.end();
      ops.end();
    }
  });
});
