import { ErrorReason, LedgerlineError } from '@ledgerline/errors';
import { MetadataServiceReason } from '@ledgerline/metadata-contract';
import { ensureStandaloneNamespace, standaloneNamespaceLine } from './standalone-namespace.js';

/** An admin that records what it was asked to create and answers as the metadata service would. */
function adminWith(existing: { tenant: boolean; namespace: boolean }, failure?: LedgerlineError) {
  const created: unknown[][] = [];
  const exists = (what: string) =>
    new LedgerlineError('ALREADY_EXISTS', MetadataServiceReason.TENANT_EXISTS, `${what} exists`);
  return {
    created,
    async createTenant(tenant: string) {
      if (failure !== undefined) throw failure;
      if (existing.tenant) throw exists(tenant);
      created.push([tenant]);
      return undefined as never;
    },
    async createNamespace(namespace: string, policies?: unknown) {
      if (existing.namespace) throw exists(namespace);
      created.push([namespace, policies]);
      return undefined as never;
    },
  };
}

describe("standalone's public/default", () => {
  it('is created with topic auto-creation on when missing', async () => {
    const admin = adminWith({ tenant: false, namespace: false });
    await ensureStandaloneNamespace(admin);
    expect(admin.created).toEqual([['public'], ['public/default', { allowAutoTopicCreation: true }]]);
  });

  it('is left as it is when it exists, so policies an admin set survive a restart', async () => {
    const admin = adminWith({ tenant: true, namespace: true });
    await ensureStandaloneNamespace(admin);
    expect(admin.created).toEqual([]);
  });

  it('stops standalone from starting on any other failure', async () => {
    const broken = new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'the store is down');
    await expect(ensureStandaloneNamespace(adminWith({ tenant: false, namespace: false }, broken))).rejects.toBe(
      broken,
    );
  });

  it('says in the start lines whether its topics are created on first use', async () => {
    const withPolicy = (allowAutoTopicCreation: boolean) => ({
      getNamespace: async () => ({ policies: { allowAutoTopicCreation } }) as never,
    });
    expect(await standaloneNamespaceLine(withPolicy(true))).toBe('public/default (topics are created on first use)');
    expect(await standaloneNamespaceLine(withPolicy(false))).toContain(
      'ledgerline namespaces update public/default --allow-auto-topic-creation true',
    );
  });
});
