import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import { MetadataStoreService } from '@ledgerline/proto';
import { closeClient, createClient, RpcReason } from '@ledgerline/rpc';
import { TestService, testServiceImpl } from '@ledgerline/rpc/testing';
import { createToken, SecurityReason } from '@ledgerline/security';
import { Metadata } from '@grpc/grpc-js';
import { createDevCertificates, type DevCertificates } from '@ledgerline/security/dev-certificates';
import { eventually } from '@ledgerline/testing';
import { grpcService } from './grpc-server.js';
import { createLogger } from './logger.js';
import { serve, type RunningService } from './serve.js';
import { serviceConfigSchema } from './service-config.js';
import { waitingService } from './testing/waiting-service.js';

const CALL_DEADLINE_MS = 5_000;

function clientCredentials(ca: string, leaf?: { cert: string; key: string }): ChannelCredentials {
  return credentials.createSsl(
    Buffer.from(ca),
    leaf === undefined ? null : Buffer.from(leaf.key),
    leaf === undefined ? null : Buffer.from(leaf.cert),
  );
}

async function failure(call: Promise<unknown>): Promise<LedgerlineError> {
  try {
    await call;
  } catch (error) {
    return LedgerlineError.from(error);
  }
  throw new Error('the call succeeded');
}

describe('service security (TLS, mutual TLS, internal APIs)', () => {
  let dir: string;
  let good: DevCertificates;
  let rogue: DevCertificates;
  const running: RunningService[] = [];
  const clients: object[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledgerline-tls-'));
    [good, rogue] = await Promise.all([
      createDevCertificates({ names: ['metadata', 'writer-owner', 'garbage-collector', 'kafka-gateway', 'client'] }),
      createDevCertificates({ names: ['metadata', 'writer-owner'] }),
    ]);
    for (const [name, pair] of Object.entries(good.leaves)) {
      await writeFile(join(dir, `${name}.pem`), pair.cert);
      await writeFile(join(dir, `${name}-key.pem`), pair.key);
    }
    await writeFile(join(dir, 'ca.pem'), good.ca.cert);
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) closeClient(client);
    await Promise.all(running.splice(0).map((service) => service.shutdown()));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function start(settings: Record<string, unknown>): Promise<RunningService> {
    const service = await serve({
      name: 'metadata',
      config: serviceConfigSchema.parse({
        grpcHost: '127.0.0.1',
        grpcPort: 0,
        metricsHost: '127.0.0.1',
        metricsPort: 0,
        tlsCert: join(dir, 'metadata.pem'),
        tlsKey: join(dir, 'metadata-key.pem'),
        tlsCa: join(dir, 'ca.pem'),
        tlsReloadIntervalMs: 100,
        ...settings,
      }),
      services: [
        waitingService().registration,
        grpcService(TestService, testServiceImpl({ started: [], aborted: [], received: [] })),
      ],
      logger: createLogger('metadata', { level: 'silent' }),
      signals: [],
    });
    running.push(service);
    return service;
  }

  function internalClient(service: RunningService, channelCredentials: ChannelCredentials) {
    const client = createClient(MetadataStoreService, `127.0.0.1:${service.grpcPort}`, {
      credentials: channelCredentials,
      defaultDeadlineMs: CALL_DEADLINE_MS,
    });
    clients.push(client);
    return client;
  }

  function plainClient(service: RunningService, channelCredentials: ChannelCredentials) {
    const client = createClient(TestService, `127.0.0.1:${service.grpcPort}`, {
      credentials: channelCredentials,
      defaultDeadlineMs: CALL_DEADLINE_MS,
    });
    clients.push(client);
    return client;
  }

  it('stays plaintext and open when no TLS file is configured', async () => {
    const service = await start({ tlsCert: undefined, tlsKey: undefined, tlsCa: undefined });
    const client = internalClient(service, credentials.createInsecure());
    await expect(client.get({ path: '/wait/0' })).resolves.toBeDefined();
  });

  it('serves TLS to a client that trusts the CA, without a client certificate on public APIs', async () => {
    const service = await start({});
    await expect(plainClient(service, clientCredentials(good.ca.cert)).echo({ text: 'hi' })).resolves.toMatchObject({
      text: 'hi',
    });
  });

  it('fails a client that trusts another CA with a TLS handshake error', async () => {
    const service = await start({});
    const error = await failure(plainClient(service, clientCredentials(rogue.ca.cert)).echo({ text: 'hi' }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.reason).toBe(RpcReason.TLS_HANDSHAKE_FAILED);
    expect(error.message).toMatch(/certificate/);
  });

  it('refuses an internal API to a client without a certificate, and counts the refusal', async () => {
    const service = await start({});
    const error = await failure(internalClient(service, clientCredentials(good.ca.cert)).get({ path: '/wait/0' }));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.reason).toBe(SecurityReason.SERVICE_CERTIFICATE_REQUIRED);
    const metrics = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(
      /ledgerline_grpc_server_refused_total\{method="\/ledgerline.v1.MetadataStoreService\/Get",reason="SERVICE_CERTIFICATE_REQUIRED",service="metadata"\} 1/,
    );
  });

  it("refuses an internal API to a plain client's certificate and allows it to a service's", async () => {
    const service = await start({});
    const asClient = internalClient(service, clientCredentials(good.ca.cert, good.leaves['client']));
    const error = await failure(asClient.get({ path: '/wait/0' }));
    expect(error.code).toBe('PERMISSION_DENIED');
    expect(error.reason).toBe(SecurityReason.SERVICE_NOT_ALLOWED);
    expect(error.message).toContain('client');
    const asOwner = internalClient(service, clientCredentials(good.ca.cert, good.leaves['writer-owner']));
    await expect(asOwner.get({ path: '/wait/0' })).resolves.toBeDefined();
  });

  it('gives no identity to a certificate from an untrusted CA, and refuses it at the handshake when client certificates are required', async () => {
    const optional = await start({});
    const untrusted = clientCredentials(good.ca.cert, rogue.leaves['writer-owner']);
    const error = await failure(internalClient(optional, untrusted).get({ path: '/wait/0' }));
    expect(error.reason).toBe(SecurityReason.SERVICE_CERTIFICATE_REQUIRED);

    const required = await start({ tlsRequireClientCert: true });
    const refused = await failure(plainClient(required, untrusted).echo({ text: 'hi' }));
    expect(refused.code).toBe('UNAVAILABLE');
    const noCertificate = await failure(plainClient(required, clientCredentials(good.ca.cert)).echo({ text: 'hi' }));
    expect(noCertificate.code).toBe('UNAVAILABLE');
    const owner = internalClient(required, clientCredentials(good.ca.cert, good.leaves['writer-owner']));
    await expect(owner.get({ path: '/wait/0' })).resolves.toBeDefined();
  });

  it('picks up a rotated certificate and CA without a restart', async () => {
    const rotated = await mkdtemp(join(tmpdir(), 'ledgerline-rotate-'));
    try {
      const files = { cert: join(rotated, 'tls.crt'), key: join(rotated, 'tls.key'), ca: join(rotated, 'ca.crt') };
      await writeFile(files.cert, good.leaves['metadata']!.cert);
      await writeFile(files.key, good.leaves['metadata']!.key);
      await writeFile(files.ca, good.ca.cert);
      const service = await start({ tlsCert: files.cert, tlsKey: files.key, tlsCa: files.ca });
      const newCa = clientCredentials(rogue.ca.cert, rogue.leaves['writer-owner']);
      expect((await failure(internalClient(service, newCa).get({ path: '/wait/0' }))).reason).toBe(
        RpcReason.TLS_HANDSHAKE_FAILED,
      );

      // The key is written first: the mismatched pair seen in between must not be used.
      await writeFile(files.key, rogue.leaves['metadata']!.key);
      await writeFile(files.cert, rogue.leaves['metadata']!.cert);
      await writeFile(files.ca, rogue.ca.cert);
      await eventually(
        async () => {
          const client = internalClient(service, newCa);
          return client.get({ path: '/wait/0' }).then(
            () => true,
            () => false,
          );
        },
        { description: 'a client of the new CA is served' },
      );
    } finally {
      await rm(rotated, { recursive: true, force: true });
    }
  });

  it('refuses to start with a key that does not belong to the certificate, naming the files', async () => {
    await expect(start({ tlsKey: join(dir, 'client-key.pem') })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: SecurityReason.TLS_FILES_INVALID,
    });
  });

  describe('bearer tokens', () => {
    const secret = 'a-development-secret-of-at-least-32-bytes';
    const auth = {
      tlsCert: undefined,
      tlsKey: undefined,
      tlsCa: undefined,
      authEnabled: true,
      authTokenSecret: secret,
      superUserRoles: 'ops, admin',
    };
    const bearer = (token: string): Metadata => {
      const metadata = new Metadata();
      metadata.set('authorization', `Bearer ${token}`);
      return metadata;
    };

    it('refuses a call without a token or with an expired one, and lets a valid one with the right role through', async () => {
      const service = await start(auth);
      const client = plainClient(service, credentials.createInsecure());
      expect(await failure(client.echo({ text: 'hi' }))).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: SecurityReason.TOKEN_MISSING,
      });
      const expired = await createToken({ subject: 'app', secret, expiresIn: -5 });
      expect(await failure(client.echo({ text: 'hi' }, { metadata: bearer(expired) }))).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: SecurityReason.TOKEN_EXPIRED,
      });
      // The test service is in no permission table: a valid token of a plain role is refused, a super-user's passes.
      const plain = await createToken({ subject: 'app', secret, expiresIn: '1h' });
      expect(await failure(client.echo({ text: 'hi' }, { metadata: bearer(plain) }))).toMatchObject({
        code: 'PERMISSION_DENIED',
        reason: SecurityReason.SUPER_USER_REQUIRED,
      });
      const valid = await createToken({ subject: 'ops', secret, expiresIn: '1h' });
      await expect(client.echo({ text: 'hi' }, { metadata: bearer(valid) })).resolves.toMatchObject({ text: 'hi' });
    });

    it('refuses internal APIs to a role that is not a super-user and allows them to a super-user', async () => {
      const service = await start(auth);
      const app = createClient(MetadataStoreService, `127.0.0.1:${service.grpcPort}`, {
        defaultDeadlineMs: CALL_DEADLINE_MS,
        defaultMetadata: bearer(await createToken({ subject: 'app', secret })),
      });
      clients.push(app);
      expect(await failure(app.get({ path: '/wait/0' }))).toMatchObject({
        code: 'PERMISSION_DENIED',
        reason: SecurityReason.SERVICE_NOT_ALLOWED,
      });
      const ops = createClient(MetadataStoreService, `127.0.0.1:${service.grpcPort}`, {
        defaultDeadlineMs: CALL_DEADLINE_MS,
        defaultMetadata: bearer(await createToken({ subject: 'ops', secret })),
      });
      clients.push(ops);
      await expect(ops.get({ path: '/wait/0' })).resolves.toBeDefined();
    });

    it('logs a refusal with its method and reason, never the token', async () => {
      const lines: string[] = [];
      const service = await serve({
        name: 'metadata',
        config: serviceConfigSchema.parse({
          grpcHost: '127.0.0.1',
          grpcPort: 0,
          metricsHost: '127.0.0.1',
          metricsPort: 0,
          ...auth,
        }),
        services: [waitingService().registration],
        logger: createLogger('metadata', {
          level: 'warn',
          destination: { write: (line: string) => void lines.push(line) },
        }),
        signals: [],
      });
      running.push(service);
      const token = await createToken({ subject: 'app', secret, expiresIn: -5 });
      const client = internalClient(service, credentials.createInsecure());
      expect((await failure(client.get({ path: '/wait/0' }, { metadata: bearer(token) }))).reason).toBe(
        SecurityReason.TOKEN_EXPIRED,
      );
      const refusal = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((line) => line['msg'] === 'call refused');
      expect(refusal).toMatchObject({
        method: '/ledgerline.v1.MetadataStoreService/Get',
        reason: SecurityReason.TOKEN_EXPIRED,
      });
      expect(lines.join('')).not.toContain(token.split('.')[2]!);
    });

    it('takes a service certificate instead of a token when mutual TLS is on', async () => {
      const service = await start({
        ...auth,
        tlsCert: join(dir, 'metadata.pem'),
        tlsKey: join(dir, 'metadata-key.pem'),
        tlsCa: join(dir, 'ca.pem'),
      });
      const owner = internalClient(service, clientCredentials(good.ca.cert, good.leaves['writer-owner']));
      await expect(owner.get({ path: '/wait/0' })).resolves.toBeDefined();
      const plain = plainClient(service, clientCredentials(good.ca.cert, good.leaves['client']));
      expect((await failure(plain.echo({ text: 'hi' }))).reason).toBe(SecurityReason.TOKEN_MISSING);
    });

    it("checks the client token a service forwards on public APIs, so a service's certificate lends it no rights", async () => {
      const service = await start({
        ...auth,
        tlsCert: join(dir, 'metadata.pem'),
        tlsKey: join(dir, 'metadata-key.pem'),
        tlsCa: join(dir, 'ca.pem'),
      });
      const gatewayCredentials = clientCredentials(good.ca.cert, good.leaves['kafka-gateway']);
      const gateway = plainClient(service, gatewayCredentials);
      const app = bearer(await createToken({ subject: 'app', secret }));
      const ops = bearer(await createToken({ subject: 'ops', secret }));
      // On its own behalf (no token) the service passes; for a client, the client's role decides.
      await expect(gateway.echo({ text: 'own' })).resolves.toMatchObject({ text: 'own' });
      expect(await failure(gateway.echo({ text: 'for app' }, { metadata: app }))).toMatchObject({
        code: 'PERMISSION_DENIED',
        reason: SecurityReason.SUPER_USER_REQUIRED,
      });
      await expect(gateway.echo({ text: 'for ops' }, { metadata: ops })).resolves.toMatchObject({ text: 'for ops' });
      expect(await failure(gateway.echo({ text: 'forged' }, { metadata: bearer('not.a.token') }))).toMatchObject({
        code: 'UNAUTHENTICATED',
      });
      // Internal APIs stay the service identity's to pass (the gateway moves cursors for its clients' groups).
      const internal = internalClient(service, clientCredentials(good.ca.cert, good.leaves['writer-owner']));
      await expect(internal.get({ path: '/wait/0' }, { metadata: app })).resolves.toBeDefined();
    });
  });
});
