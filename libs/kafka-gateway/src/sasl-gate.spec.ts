import { Writable } from 'node:stream';
import { ApiKey, KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { createToken, TokenVerifier } from '@ledgerline/security';
import { createLogger } from '@ledgerline/service-kit';
import { resolveKafkaGatewaySettings } from './settings.js';
import { startKafkaGateway, type RunningKafkaGateway } from './start-gateway.js';
import { plainAuthBytes, RawKafkaClient } from './testing/raw-kafka-client.js';

// The SASL gate over raw Kafka requests: with a token check, a connection may
// send only ApiVersions, SaslHandshake and SaslAuthenticate until it logged
// in; ListGroups stands for every other request (it needs no metadata
// service, so the gateway here has none).

const SECRET = 'a-kafka-gateway-secret-of-at-least-32-bytes';

/** The gateway's log lines, as JSON objects. */
function captureLog(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { lines, stream };
}

describe('the Kafka gateway with SASL required', () => {
  let gateway: RunningKafkaGateway;
  const log = captureLog();
  const clients: RawKafkaClient[] = [];

  async function connect(): Promise<RawKafkaClient> {
    const client = await RawKafkaClient.open(gateway.port);
    clients.push(client);
    return client;
  }

  async function login(client: RawKafkaClient, password: string): Promise<Record<string, unknown>> {
    const handshake = await client.request(ApiKey.SaslHandshake, 1, { mechanism: 'PLAIN' });
    expect(handshake).toMatchObject({ errorCode: KafkaErrorCode.NONE, mechanisms: ['PLAIN'] });
    const answer = await client.request(ApiKey.SaslAuthenticate, 1, { authBytes: plainAuthBytes('app', password) });
    if (answer === 'closed') throw new Error('SaslAuthenticate got no answer');
    return answer;
  }

  beforeAll(async () => {
    gateway = await startKafkaGateway({
      settings: resolveKafkaGatewaySettings({ kafkaHost: '127.0.0.1', kafkaPort: 0, kafkaCreateNamespace: false }),
      metadataAddress: '127.0.0.1:1',
      logger: createLogger('kafka-gateway', { level: 'warn', destination: log.stream }),
      tokenVerifier: await TokenVerifier.create({ secret: SECRET }),
    });
  });

  afterAll(async () => {
    for (const client of clients) client.end();
    await gateway.close();
  });

  it('answers ApiVersions, then closes the connection at a request sent before SASL, logging the client and API', async () => {
    const client = await connect();
    expect(await client.request(ApiKey.ApiVersions, 0, {})).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    expect(await client.request(ApiKey.ListGroups, 0, {})).toBe('closed');
    const refusals = log.lines.filter(
      (line) => line['msg'] === 'kafka request before SASL authentication: connection closed',
    );
    expect(refusals[0]).toEqual(expect.objectContaining({ client: '127.0.0.1', apiKey: ApiKey.ListGroups }));
  });

  it('serves every request once SaslAuthenticate with a valid token:<jwt> password succeeded, and not before', async () => {
    const early = await connect();
    expect(await early.request(ApiKey.ListGroups, 0, {})).toBe('closed');
    const client = await connect();
    const token = await createToken({ subject: 'app', secret: SECRET });
    expect(await login(client, `token:${token}`)).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    expect(await client.request(ApiKey.ListGroups, 0, {})).toMatchObject({ errorCode: KafkaErrorCode.NONE });
  });

  it.each([
    [
      'a token signed with another secret',
      async () => `token:${await createToken({ subject: 'app', secret: 'x'.repeat(40) })}`,
    ],
    ['a password that is not token:<jwt>', async () => 'hunter2'],
  ])('answers %s with SASL_AUTHENTICATION_FAILED and a message, then closes', async (_what, password) => {
    const client = await connect();
    const answer = await login(client, await password());
    expect(answer['errorCode']).toBe(KafkaErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(answer['errorCode']).toBe(58);
    expect(answer['errorMessage']).toEqual(expect.stringMatching(/token/));
    await client.whenClosed();
  });
});
