import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata } from '@grpc/grpc-js';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { createToken, SecurityReason } from '@ledgerline/security';
import { startMetadataService, type RunningMetadataService } from './metadata-server.js';
import { failure } from './testing/spec-support.js';
import { testServiceConfig } from './testing/service-fixtures.js';

const SECRET = 'a-test-secret-that-is-at-least-32-bytes-long';

/** GetTenant over gRPC with token authentication: who may read a tenant, and how bad requests are refused. */
describe('GetTenant', () => {
  let dir: string;
  let running: RunningMetadataService;
  let admin: Client<typeof AdminService>;
  const as = async (role: string) => {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${await createToken({ subject: role, secret: SECRET })}`);
    return { metadata };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-get-tenant-'));
    const bus = new InProcessBus();
    const store = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
    running = await startMetadataService({
      store,
      bus,
      config: {
        ...testServiceConfig(),
        authEnabled: true,
        authTokenSecret: SECRET,
        superUserRoles: 'root',
        // Every call reads the tenant's roles afresh, so the spec never depends on a cache's age.
        authPermissionCacheMs: 0,
      },
      signals: [],
    });
    admin = createClient(AdminService, `127.0.0.1:${running.port}`);
    await admin.createTenant({ tenant: 'acme', adminRoles: ['acme-admin', 'acme-ops'] }, await as('root'));
    await admin.createTenant({ tenant: 'globex', adminRoles: ['globex-admin'] }, await as('root'));
  });

  afterAll(async () => {
    closeClient(admin);
    await running?.shutdown('test finished');
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers a super-user and the tenant's own admins with its roles and creation time", async () => {
    const before = BigInt(Date.now());
    for (const role of ['root', 'acme-admin', 'acme-ops']) {
      const { tenant } = await admin.getTenant({ tenant: 'acme' }, await as(role));
      expect(tenant).toMatchObject({ name: 'acme', adminRoles: ['acme-admin', 'acme-ops'] });
      expect(tenant!.createdAtMs).toBeGreaterThan(0n);
      expect(tenant!.createdAtMs).toBeLessThanOrEqual(before);
    }
  });

  it("refuses another tenant's admin, a role with no tenant, and a call without a token", async () => {
    for (const role of ['globex-admin', 'someone']) {
      const refused = await failure(admin.getTenant({ tenant: 'acme' }, await as(role)));
      expect(refused).toMatchObject({ code: 'PERMISSION_DENIED', reason: SecurityReason.TENANT_ADMIN_REQUIRED });
      expect(refused.message).toContain("add it to the tenant's admin roles");
    }
    expect(await failure(admin.getTenant({ tenant: 'acme' }))).toMatchObject({ code: 'UNAUTHENTICATED' });
    // A tenant that does not exist is refused to a non-super-user like any other: the refusal tells nothing of it.
    expect(await failure(admin.getTenant({ tenant: 'nobody' }, await as('acme-admin')))).toMatchObject({
      code: 'PERMISSION_DENIED',
      reason: SecurityReason.TENANT_ADMIN_REQUIRED,
    });
  });

  it('answers NOT_FOUND with the reason for an unknown tenant, INVALID_ARGUMENT for a bad name', async () => {
    const root = await as('root');
    const missing = await failure(admin.getTenant({ tenant: 'nobody' }, root));
    expect(missing).toMatchObject({ code: 'NOT_FOUND', reason: 'TENANT_NOT_FOUND' });
    expect(missing.message).toContain('create it first');
    for (const tenant of ['', 'bad/name', '..', 'x'.repeat(1_000)]) {
      for (const options of [root, await as('acme-admin')]) {
        expect(await failure(admin.getTenant({ tenant }, options))).toMatchObject({
          code: 'INVALID_ARGUMENT',
          reason: 'INVALID_TENANT_NAME',
        });
      }
    }
  });
});
