import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import type { DescService } from '@bufbuild/protobuf';
import { credentials, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { LedgerlineError } from '@ledgerline/errors';
import {
  AdminService,
  CursorsService,
  GarbageCollectorService,
  LookupService,
  MetadataStoreService,
  TopicsService,
} from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient, RpcReason } from '@ledgerline/rpc';
import { createToken, SecurityReason } from '@ledgerline/security';
import { createDevCertificates, writeDevCertificates } from '@ledgerline/security/dev-certificates';
import { ledgerline } from './testing/run-cli.js';
import type { RunningStandalone } from './standalone.js';
import { eventually } from '@ledgerline/testing';
import { startTestStandalone, tokenAuthArgv } from './testing/test-standalone.js';

const SECRET = 'a-development-secret-of-at-least-32-bytes';

describe('standalone with TLS and token authentication, through the CLI and the SDK', () => {
  let dir: string;
  let certs: string;
  let rogueCa: string;
  let running: RunningStandalone;
  let url: string;
  let opsToken: string;
  let appToken: string;
  const clients: LedgerlineClient[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-secure-'));
    certs = join(dir, 'certs');
    const made = await ledgerline('certs', 'dev', '--out', certs);
    expect(made.code).toBe(0);
    rogueCa = (await writeDevCertificates(join(dir, 'rogue'), await createDevCertificates({ names: ['client'] })))
      .caCert;
    running = await startTestStandalone(join(dir, 'data'), 'silent', [
      '--tls-cert',
      join(certs, 'metadata.pem'),
      '--tls-key',
      join(certs, 'metadata-key.pem'),
      '--tls-ca',
      join(certs, 'ca.pem'),
      // A short bound keeps the waits for grants and revokes short; the default is 5 s.
      ...tokenAuthArgv(SECRET, 200),
    ]);
    url = `localhost:${running.grpcPort}`;
    opsToken = (
      await ledgerline('tokens', 'create', '--subject', 'ops', '--secret', SECRET, '--expires-in', '1h')
    ).stdout.trim();
    appToken = (await ledgerline('tokens', 'create', '--subject', 'app', '--secret', SECRET)).stdout.trim();
  });

  afterAll(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await running?.shutdown('test finished');
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes a CA and a certificate per service and for a client', () => {
    for (const name of ['ca', 'metadata', 'writer-owner', 'readonly-owner', 'garbage-collector', 'client']) {
      expect(existsSync(join(certs, `${name}.pem`))).toBe(true);
    }
    expect(running.writer.service.securitySummary).toContain('token authentication on');
  });

  it('administers with a super-user token over TLS, and refuses a call without a token', async () => {
    const tls = ['--url', url, '--tls-ca', join(certs, 'ca.pem')];
    const refused = await ledgerline(...tls, 'tenants', 'create', 'acme');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`UNAUTHENTICATED ${SecurityReason.TOKEN_MISSING}`);
    const notSuper = await ledgerline(...tls, '--token', appToken, 'tenants', 'create', 'acme');
    expect(notSuper.stderr).toContain(`PERMISSION_DENIED ${SecurityReason.SUPER_USER_REQUIRED}`);
    expect((await ledgerline(...tls, '--token', opsToken, 'tenants', 'create', 'acme')).code).toBe(0);
    expect((await ledgerline(...tls, '--token', opsToken, 'namespaces', 'create', 'acme/orders')).code).toBe(0);
  });

  it('fails a CLI call that trusts another CA at once, with the TLS reason', async () => {
    const run = await ledgerline('--url', url, '--tls-ca', rogueCa, '--token', opsToken, 'tenants', 'list');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(RpcReason.TLS_HANDSHAKE_FAILED);
  });

  it('produces and reads with the SDK over TLS with a token, and fails a wrong CA without retrying', async () => {
    await ledgerline(
      '--url',
      url,
      '--tls-ca',
      join(certs, 'ca.pem'),
      '--token',
      opsToken,
      'namespaces',
      'grant-permission',
      'acme/orders',
      '--role',
      'app',
      '--actions',
      'produce,consume',
    );
    await ledgerline(
      '--url',
      url,
      '--tls-ca',
      join(certs, 'ca.pem'),
      '--token',
      opsToken,
      'topics',
      'create',
      'persistent://acme/orders/sdk',
    );
    const ca = readFileSync(join(certs, 'ca.pem'));
    const client = createClient({ serviceUrl: url, tls: { ca }, token: appToken });
    clients.push(client);
    const producer = await client.producer({ topic: 'acme/orders/sdk', batching: false });
    await producer.send('hello');
    const reader = await client.reader({ topic: 'acme/orders/sdk' });
    for await (const message of reader) {
      expect(Buffer.from(message.payload).toString()).toBe('hello');
      break;
    }
    await reader.close();

    const wrong = createClient({
      serviceUrl: url,
      tls: { ca: readFileSync(rogueCa) },
      token: appToken,
    });
    clients.push(wrong);
    await expect(wrong.producer({ topic: 'acme/orders/sdk', batching: false })).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      reason: RpcReason.TLS_HANDSHAKE_FAILED,
    });
  });

  describe('permissions per namespace', () => {
    const admin = (...args: string[]) =>
      ledgerline('--url', url, '--tls-ca', join(certs, 'ca.pem'), '--token', opsToken, ...args);
    const sdk = (token: string): LedgerlineClient => {
      const client = createClient({ serviceUrl: url, tls: { ca: readFileSync(join(certs, 'ca.pem')) }, token });
      clients.push(client);
      return client;
    };
    const token = async (role: string) =>
      (await ledgerline('tokens', 'create', '--subject', role, '--secret', SECRET)).stdout.trim();

    beforeAll(async () => {
      expect((await admin('tenants', 'create', 'globex', '--admin-role', 'globex-admin')).code).toBe(0);
      expect((await admin('namespaces', 'create', 'globex/billing')).code).toBe(0);
      expect((await admin('topics', 'create', 'persistent://globex/billing/invoices')).code).toBe(0);
    });

    it('refuses a role without a grant, allows it once granted, and refuses it again once revoked, without a restart', async () => {
      const client = sdk(await token('billing-app'));
      await expect(client.producer({ topic: 'globex/billing/invoices', batching: false })).rejects.toMatchObject({
        code: 'PERMISSION_DENIED',
        reason: SecurityReason.PERMISSION_NOT_GRANTED,
      });
      const granted = await admin(
        'namespaces',
        'grant-permission',
        'globex/billing',
        '--role',
        'billing-app',
        '--actions',
        'produce',
      );
      expect(granted.stdout).toContain('billing-app: produce');
      await eventually(
        () =>
          client.producer({ topic: 'globex/billing/invoices', batching: false }).then(
            async (producer) => {
              await producer.send('invoice-1');
              return true;
            },
            () => false,
          ),
        { description: 'the grant reaches the owner' },
      );
      // Produce does not give consume: the reader's first fetch is refused.
      const reader = await client.reader({ topic: 'globex/billing/invoices' });
      const firstRead = (async () => {
        for await (const message of reader) return message;
        return undefined;
      })();
      await expect(firstRead).rejects.toMatchObject({ reason: SecurityReason.PERMISSION_NOT_GRANTED });
      await reader.close();
      expect((await admin('namespaces', 'permissions', 'globex/billing')).stdout).toContain(
        'tenant admin roles: globex-admin',
      );
      await admin('namespaces', 'revoke-permission', 'globex/billing', '--role', 'billing-app');
      // A client remembers a topic's partition count once looked up, so each check asks with a new one.
      const billingToken = await token('billing-app');
      await eventually(
        () =>
          sdk(billingToken)
            .producer({ topic: 'globex/billing/invoices', batching: false })
            .then(
              () => false,
              (error: { reason?: string }) => error.reason === SecurityReason.PERMISSION_NOT_GRANTED,
            ),
        { description: 'the revoke reaches the owner' },
      );
    });

    it('serves consumers through the read-only group over TLS, checked against the reader namespace', async () => {
      expect((await admin('namespaces', 'create', 'globex/billing-mirror', '--owner-group', 'readers')).code).toBe(0);
      expect((await admin('namespaces', 'set-writer-namespace', 'globex/billing-mirror', 'globex/billing')).code).toBe(
        0,
      );
      expect((await admin('topics', 'create', 'persistent://globex/billing/ledger')).code).toBe(0);
      const producer = await sdk(opsToken).producer({ topic: 'globex/billing/ledger', batching: false });
      await producer.send('entry-1');
      const auditor = createClient({
        serviceUrl: url,
        tls: { ca: readFileSync(join(certs, 'ca.pem')) },
        token: await token('auditor'),
        lookupGroup: 'readers',
      });
      clients.push(auditor);
      const firstOf = async (): Promise<string | undefined> => {
        // The reader topic: its lookup, like its reads, is checked on the reader namespace.
        const reader = await auditor.reader({ topic: 'globex/billing-mirror/ledger', start: 'earliest' });
        try {
          for await (const message of reader) return Buffer.from(message.payload).toString();
          return undefined;
        } finally {
          await reader.close();
        }
      };
      await expect(firstOf()).rejects.toMatchObject({ reason: SecurityReason.PERMISSION_NOT_GRANTED });
      await admin(
        'namespaces',
        'grant-permission',
        'globex/billing-mirror',
        '--role',
        'auditor',
        '--actions',
        'consume',
      );
      // Reads go to the read-only owner, which reaches the writer owner's cursors with its own TLS settings.
      await eventually(
        () =>
          firstOf().then(
            (first) => first === 'entry-1',
            () => false,
          ),
        { description: 'the reader-namespace grant reaches the read-only owner' },
      );
    });

    it("lets a tenant's admin administer it and use its topics, but not another tenant", async () => {
      const globexAdmin = await token('globex-admin');
      const as = (...args: string[]) =>
        ledgerline('--url', url, '--tls-ca', join(certs, 'ca.pem'), '--token', globexAdmin, ...args);
      expect((await as('namespaces', 'create', 'globex/audit')).code).toBe(0);
      expect(
        (await as('namespaces', 'grant-permission', 'globex/audit', '--role', 'auditor', '--actions', 'consume')).code,
      ).toBe(0);
      const crossTenant = await as('namespaces', 'create', 'acme/stolen');
      expect(crossTenant.code).toBe(1);
      expect(crossTenant.stderr).toContain(`PERMISSION_DENIED ${SecurityReason.TENANT_ADMIN_REQUIRED}`);
      expect((await as('tenants', 'create', 'initech')).stderr).toContain(SecurityReason.SUPER_USER_REQUIRED);
      const producer = await sdk(globexAdmin).producer({ topic: 'globex/billing/invoices', batching: false });
      await producer.send('from the admin');
    });

    it('does not tell a role without rights whether a topic exists', async () => {
      const outsider = await token('outsider');
      const ask = (topic: string) =>
        ledgerline('--url', url, '--tls-ca', join(certs, 'ca.pem'), '--token', outsider, 'topics', 'get', topic);
      const existing = await ask('persistent://globex/billing/invoices');
      const missing = await ask('persistent://globex/billing/nothing-here');
      expect(existing.stderr).toContain(`PERMISSION_DENIED ${SecurityReason.PERMISSION_NOT_GRANTED}`);
      expect(missing.stderr.replace('nothing-here', 'X')).toBe(existing.stderr.replace('invoices', 'X'));
    });
  });

  describe('every RPC family', () => {
    const ca = () => readFileSync(join(certs, 'ca.pem'));
    const asService = (name: string) =>
      credentials.createSsl(
        ca(),
        readFileSync(join(certs, `${name}-key.pem`)),
        readFileSync(join(certs, `${name}.pem`)),
      );
    const bearer = (token: string | undefined): Metadata => {
      const metadata = new Metadata();
      if (token !== undefined) metadata.set('authorization', `Bearer ${token}`);
      return metadata;
    };
    const opened: object[] = [];
    afterAll(() => opened.splice(0).forEach((client) => closeClient(client)));
    function client<S extends DescService>(service: S, channel: ChannelCredentials) {
      const made = createRpcClient(service, url, { credentials: channel, defaultDeadlineMs: 10_000 });
      opened.push(made);
      return made;
    }
    const topic = 'persistent://matrix/ns/t';
    let allowed: string;
    let lacking: string;
    let expired: string;

    beforeAll(async () => {
      const admin = (...args: string[]) =>
        ledgerline('--url', url, '--tls-ca', join(certs, 'ca.pem'), '--token', opsToken, ...args);
      expect((await admin('tenants', 'create', 'matrix')).code).toBe(0);
      expect((await admin('namespaces', 'create', 'matrix/ns')).code).toBe(0);
      expect((await admin('topics', 'create', topic)).code).toBe(0);
      await admin(
        'namespaces',
        'grant-permission',
        'matrix/ns',
        '--role',
        'matrix-app',
        '--actions',
        'produce,consume',
      );
      allowed = (await ledgerline('tokens', 'create', '--subject', 'matrix-app', '--secret', SECRET)).stdout.trim();
      lacking = (await ledgerline('tokens', 'create', '--subject', 'stranger', '--secret', SECRET)).stdout.trim();
      expired = await createToken({ subject: 'matrix-app', secret: SECRET, expiresIn: -5 });
    });

    /** Calls one method of each family with a token, or as a service, and says whether security let it through. */
    async function outcome(call: (metadata: Metadata) => Promise<unknown>, token: string | undefined) {
      try {
        await call(bearer(token));
        return 'through';
      } catch (error) {
        const failure = LedgerlineError.from(error);
        return failure.code === 'UNAUTHENTICATED' || failure.code === 'PERMISSION_DENIED'
          ? `${failure.code} ${failure.reason}`
          : 'through';
      }
    }

    it('refuses no token, an expired token and a role without rights, and lets the right caller through', async () => {
      const plain = credentials.createSsl(ca());
      const families: Array<[string, (metadata: Metadata) => Promise<unknown>, string]> = [
        ['admin', (metadata) => client(AdminService, plain).getTopic({ topic }, { metadata }), 'token'],
        ['lookup', (metadata) => client(LookupService, plain).lookupTopic({ topic }, { metadata }), 'token'],
        [
          'publish',
          (metadata) =>
            client(TopicsService, plain).publishOne(
              { message: { topic, producerName: 'p', sequenceId: 1n, payload: new Uint8Array([1]) } },
              { metadata },
            ),
          'token',
        ],
        [
          'read',
          (metadata) => client(TopicsService, plain).fetchByOffset({ topic, offset: 0n, maxEntries: 1 }, { metadata }),
          'token',
        ],
        [
          'metadata store',
          (metadata) => client(MetadataStoreService, plain).get({ path: '/x' }, { metadata }),
          'writer-owner',
        ],
        [
          'cursors',
          (metadata) => client(CursorsService, plain).getCursor({ topic, subscription: 's' }, { metadata }),
          'readonly-owner',
        ],
        [
          'garbage collector',
          (metadata) => client(GarbageCollectorService, plain).getStatus({}, { metadata }),
          'garbage-collector',
        ],
      ];
      for (const [family, call, rightCaller] of families) {
        expect([family, await outcome(call, undefined)]).toEqual([
          family,
          `UNAUTHENTICATED ${SecurityReason.TOKEN_MISSING}`,
        ]);
        expect([family, await outcome(call, expired)]).toEqual([
          family,
          `UNAUTHENTICATED ${SecurityReason.TOKEN_EXPIRED}`,
        ]);
        expect([family, (await outcome(call, lacking)).split(' ')[0]]).toEqual([family, 'PERMISSION_DENIED']);
        if (rightCaller === 'token') {
          expect([family, await outcome(call, allowed)]).toEqual([family, 'through']);
        } else {
          // The same call over a channel presenting the service's certificate, with no token.
          const service = rightCaller;
          const byService: Record<string, () => Promise<unknown>> = {
            'metadata store': () => client(MetadataStoreService, asService(service)).get({ path: '/x' }),
            cursors: () => client(CursorsService, asService(service)).getCursor({ topic, subscription: 's' }),
            'garbage collector': () => client(GarbageCollectorService, asService(service)).getStatus({}),
          };
          expect([family, await outcome(() => byService[family]!(), undefined)]).toEqual([family, 'through']);
        }
      }
    });
  });
});
