import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKey, KafkaErrorCode } from '@ledgerline/kafka-protocol';
import { SecurityReason } from '@ledgerline/security';
import {
  createDevCertificates,
  writeDevCertificates,
  type DevCertificateFiles,
} from '@ledgerline/security/dev-certificates';
import { createLogger } from '@ledgerline/service-kit';
import { withServiceTlsDefaults } from './listener-tls.js';
import { resolveKafkaGatewaySettings, type KafkaGatewaySettings } from './settings.js';
import { startKafkaGateway, type RunningKafkaGateway } from './start-gateway.js';
import { RawKafkaClient, type RawAnswer } from './testing/raw-kafka-client.js';

// The Kafka listener's TLS settings: their defaults from the service's
// certificate, the start-up checks, and client certificates when required.
// The gateway here has no metadata service: ApiVersions needs none.

const logger = createLogger('kafka-gateway', { level: 'silent' });

function start(overrides: Partial<KafkaGatewaySettings>): Promise<RunningKafkaGateway> {
  return startKafkaGateway({
    settings: resolveKafkaGatewaySettings({
      kafkaHost: '127.0.0.1',
      kafkaPort: 0,
      kafkaCreateNamespace: false,
      ...overrides,
    }),
    metadataAddress: '127.0.0.1:1',
    logger,
  });
}

/** ApiVersions over a fresh connection, or 'refused' when the connection itself failed. */
async function apiVersions(
  port: number,
  tls?: Parameters<typeof RawKafkaClient.open>[1],
): Promise<RawAnswer | 'refused'> {
  let client: RawKafkaClient;
  try {
    client = await RawKafkaClient.open(port, tls);
  } catch {
    return 'refused';
  }
  try {
    return await client.request(ApiKey.ApiVersions, 0, {});
  } finally {
    client.end();
  }
}

describe('the Kafka listener over TLS', () => {
  let dir: string;
  let files: DevCertificateFiles;
  let ca: Buffer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-kafka-tls-'));
    files = await writeDevCertificates(dir, await createDevCertificates({ names: ['kafka-gateway', 'client'] }));
    ca = readFileSync(files.caCert);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("defaults the listener's files to the service certificate, but never completes a Kafka pair from it", () => {
    const settings = resolveKafkaGatewaySettings();
    const service = { tlsCert: '/tls/tls.crt', tlsKey: '/tls/tls.key', tlsCa: '/tls/ca.crt' };
    expect(withServiceTlsDefaults({ ...settings, ...service })).toMatchObject({
      kafkaTlsCertFile: '/tls/tls.crt',
      kafkaTlsKeyFile: '/tls/tls.key',
      kafkaTlsCaFile: '/tls/ca.crt',
    });
    const own = withServiceTlsDefaults({ ...settings, ...service, kafkaTlsCertFile: '/kafka/cert.pem' });
    expect([own.kafkaTlsCertFile, own.kafkaTlsKeyFile]).toEqual(['/kafka/cert.pem', undefined]);
    const plain = withServiceTlsDefaults({ ...settings, tlsCa: '/tls/ca.crt' });
    expect([plain.kafkaTlsCertFile, plain.kafkaTlsKeyFile, plain.kafkaTlsCaFile]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('serves ApiVersions over TLS and closes a plain-TCP client', async () => {
    const { cert, key } = files.leaves['kafka-gateway']!;
    const gateway = await start({ kafkaTlsCertFile: cert, kafkaTlsKeyFile: key });
    try {
      expect(gateway.server.secure).toBe(true);
      expect(await apiVersions(gateway.port, { ca })).toMatchObject({ errorCode: KafkaErrorCode.NONE });
      expect(await apiVersions(gateway.port)).toBe('closed');
    } finally {
      await gateway.close();
    }
  });

  it('refuses a client without a certificate from the CA when one is required', async () => {
    const { cert, key } = files.leaves['kafka-gateway']!;
    const client = files.leaves['client']!;
    const gateway = await start({
      kafkaTlsCertFile: cert,
      kafkaTlsKeyFile: key,
      kafkaTlsCaFile: files.caCert,
      kafkaTlsRequireClientCert: true,
    });
    try {
      expect(['refused', 'closed']).toContain(await apiVersions(gateway.port, { ca }));
      const withCertificate = { ca, cert: readFileSync(client.cert), key: readFileSync(client.key) };
      expect(await apiVersions(gateway.port, withCertificate)).toMatchObject({ errorCode: KafkaErrorCode.NONE });
    } finally {
      await gateway.close();
    }
  });

  it('fails the start on a missing file, naming it', async () => {
    const missing = join(dir, 'missing.pem');
    const started = start({ kafkaTlsCertFile: missing, kafkaTlsKeyFile: files.leaves['kafka-gateway']!.key });
    await expect(started).rejects.toMatchObject({
      name: 'LedgerlineError',
      reason: SecurityReason.TLS_FILES_INVALID,
      message: expect.stringContaining(missing),
    });
  });

  it('fails the start on the key of another certificate, naming both files', async () => {
    const cert = files.leaves['kafka-gateway']!.cert;
    const key = files.leaves['client']!.key;
    const started = start({ kafkaTlsCertFile: cert, kafkaTlsKeyFile: key });
    await expect(started).rejects.toMatchObject({
      reason: SecurityReason.TLS_FILES_INVALID,
      message: expect.stringMatching(new RegExp(`${cert}.*${key}`)),
    });
  });

  it.each([
    ['a certificate without its key', { kafkaTlsCertFile: '/kafka/cert.pem' }, /kafkaTlsKeyFile/],
    ['a CA without a certificate', { kafkaTlsCaFile: '/kafka/ca.pem' }, /kafkaTlsCertFile/],
    ['a required client certificate without a CA', { kafkaTlsRequireClientCert: true }, /kafkaTlsCaFile/],
  ])('refuses %s as invalid settings', async (_what, overrides, named) => {
    const settings: Partial<KafkaGatewaySettings> =
      'kafkaTlsRequireClientCert' in overrides
        ? {
            ...overrides,
            kafkaTlsCertFile: files.leaves['kafka-gateway']!.cert,
            kafkaTlsKeyFile: files.leaves['kafka-gateway']!.key,
          }
        : overrides;
    await expect(start(settings)).rejects.toMatchObject({
      reason: 'INVALID_CONFIG',
      message: expect.stringMatching(named),
    });
  });
});
