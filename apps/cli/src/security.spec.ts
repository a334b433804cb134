import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type LedgerlineClient } from '@ledgerline/client';
import { RpcReason } from '@ledgerline/rpc';
import { SecurityReason } from '@ledgerline/security';
import { createDevCertificates, writeDevCertificates } from '@ledgerline/security/dev-certificates';
import type { CliIo } from './cli-io.js';
import { runCli } from './program.js';
import type { RunningStandalone } from './standalone.js';
import { eventually } from '@ledgerline/testing';
import { startTestStandalone } from './testing/test-standalone.js';

const SECRET = 'a-development-secret-of-at-least-32-bytes';

async function ledgerline(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    progress: () => ({ advance: () => {}, stop: () => {} }),
  };
  const code = await runCli(io, ['node', 'ledgerline', ...args]);
  return { code, stdout, stderr };
}

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
      '--auth-enabled',
      '--auth-token-secret',
      SECRET,
      '--super-user-roles',
      'ops',
      // A short bound keeps the waits for grants and revokes short; the default is 5 s.
      '--auth-permission-cache-ms',
      '200',
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
      const fresh = sdk(await token('billing-app'));
      await eventually(
        () =>
          fresh.producer({ topic: 'globex/billing/invoices', batching: false }).then(
            () => false,
            (error: { reason?: string }) => error.reason === SecurityReason.PERMISSION_NOT_GRANTED,
          ),
        { description: 'the revoke reaches the owner' },
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
});
