import { create, toBinary } from '@bufbuild/protobuf';
import {
  LedgerInfoSchema,
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
  OwnerRole,
} from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import fc from 'fast-check';
import {
  connectClients,
  expectWellRefused,
  startStandaloneService,
  type ServiceClients,
  type StandaloneService,
} from '../testing/service-fixtures.js';
import { failure } from '../testing/spec-support.js';
import { managedLedgerNodeKind } from './store-api-guard.js';

describe('the store API guard', () => {
  it('tells managed-ledger and cursor nodes from directories, bucketed or not', () => {
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent/x')).toBe('managed-ledger');
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent/$3/x')).toBe('managed-ledger');
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent/x/sub')).toBe('cursor');
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent/$3/x/sub')).toBe('cursor');
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent/$3')).toBeUndefined();
    expect(managedLedgerNodeKind('/managed-ledgers/t/ns/persistent')).toBeUndefined();
    expect(managedLedgerNodeKind('/managed-ledgers/t')).toBeUndefined();
    expect(managedLedgerNodeKind('/elsewhere/t/ns/persistent/x')).toBeUndefined();
  });
});

/**
 * Writes through the store API must never leave a record the admin API cannot
 * read: every call after them answers as before or refuses properly, never INTERNAL.
 */
describe('store API writes against the service records (standalone)', () => {
  let service: StandaloneService;
  let clients: ServiceClients;
  let topicPath: string;
  let sessionId: string;

  beforeAll(async () => {
    service = await startStandaloneService();
    clients = connectClients(service.address);
    const { admin, lookup } = clients;
    await admin.createTenant({ tenant: 'sg' });
    await admin.createNamespace({ namespace: 'sg/ns', policies: { numberOfTopicBuckets: 2, ownerGroup: 'g' } });
    topicPath = (await admin.createTopic({ topic: 'sg/ns/t' })).topic!.managedLedgerPath;
    const owner = { instanceId: 'w', role: OwnerRole.WRITER, group: 'g', advertisedAddress: 'w:1' };
    sessionId = (await lookup.registerOwner({ owner, sessionTtlMs: 300_000n })).sessionId;
    await lookup.acquireLease({ topic: 'sg/ns/t', sessionId });
  });
  afterAll(async () => {
    clients.close();
    await service.close();
  });

  it("refuses writes and deletes of the service's own records with RESERVED_PATH", async () => {
    for (const path of ['/admin', '/admin/tenants/sg', '/admin/namespaces/sg/ns', '/leases/sg/ns/t', '/owners/g/w']) {
      const put = await failure(clients.store.put({ path, value: new Uint8Array([1]) }));
      expect(put).toMatchObject({ code: 'INVALID_ARGUMENT', reason: 'RESERVED_PATH' });
      expect(await failure(clients.store.delete({ path }))).toMatchObject({ reason: 'RESERVED_PATH' });
    }
    expect(await failure(clients.store.delete({ path: `/sessions/${sessionId}` }))).toMatchObject({
      reason: 'RESERVED_PATH',
    });
    expect((await clients.store.get({ path: '/admin/tenants/sg' })).node).toBeDefined();
    expect((await clients.admin.getNamespace({ namespace: 'sg/ns' })).namespace?.name).toBe('sg/ns');
  });

  it('refuses managed-ledger and cursor values that do not decode, and accepts those that do', async () => {
    const garbage = new Uint8Array([0xff, 0xff, 0xff]);
    expect(await failure(clients.store.put({ path: topicPath, value: garbage }))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'MALFORMED_VALUE',
    });
    // A ManagedLedgerInfo whose one LedgerInfo has entries = 3 but no ledger_id (protobuf-es will not encode it).
    const noLedgerId = new Uint8Array([0x0a, 0x02, 0x10, 0x03]);
    expect(await failure(clients.store.put({ path: topicPath, value: noLedgerId }))).toMatchObject({
      reason: 'MALFORMED_VALUE',
    });
    const hugeCursorLedger = toBinary(
      ManagedCursorInfoSchema,
      create(ManagedCursorInfoSchema, { cursorsLedgerId: 2n ** 62n }),
    );
    expect(await failure(clients.store.put({ path: `${topicPath}/sub`, value: hugeCursorLedger }))).toMatchObject({
      reason: 'MALFORMED_VALUE',
    });
    const cursor = toBinary(ManagedCursorInfoSchema, create(ManagedCursorInfoSchema, { cursorsLedgerId: 7n }));
    await clients.store.put({ path: `${topicPath}/sub`, value: cursor });
    const info = create(ManagedLedgerInfoSchema, {
      state: ManagedLedgerState.ACTIVE,
      ledgerInfo: [create(LedgerInfoSchema, { ledgerId: 5n })],
    });
    await clients.store.put({ path: topicPath, value: toBinary(ManagedLedgerInfoSchema, info) });
    expect((await clients.admin.getTopic({ topic: 'sg/ns/t' })).topic?.managedLedgerPath).toBe(topicPath);
  });

  it('keeps every admin call answering properly whatever is written to the paths they read', async () => {
    const { admin, lookup, store } = clients;
    let victims = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('managed-ledger', 'cursor', 'tenant', 'namespace', 'counter', 'lease', 'owner', 'session'),
        fc.uint8Array({ maxLength: 512 }),
        async (target, value) => {
          const victim = `sg/ns/v-${victims++}`;
          const victimPath = (await admin.createTopic({ topic: victim })).topic!.managedLedgerPath;
          const path = {
            'managed-ledger': victimPath,
            cursor: `${victimPath}/c`,
            tenant: '/admin/tenants/sg',
            namespace: '/admin/namespaces/sg/ns',
            counter: '/admin/topic-counts/sg/ns',
            lease: '/leases/sg/ns/t',
            owner: '/owners/g/w',
            session: `/sessions/${sessionId}`,
          }[target];
          await store.put({ path, value }).catch((error: unknown) => {
            expect(LedgerlineError.from(error).code).toBe('INVALID_ARGUMENT');
          });
          const calls: (() => Promise<unknown>)[] = [
            () => admin.listTenants({}),
            () => admin.listNamespaces({ tenant: 'sg' }),
            () => admin.getNamespace({ namespace: 'sg/ns' }),
            () => admin.countTopics({ namespace: 'sg/ns' }),
            () => admin.listTopics({ namespace: 'sg/ns' }),
            () => admin.getTopic({ topic: 'sg/ns/t' }),
            () => admin.getTopic({ topic: victim }),
            () => lookup.getLease({ topic: 'sg/ns/t' }),
            () => lookup.lookupTopic({ topic: 'sg/ns/t' }),
            () => lookup.renewLease({ topic: 'sg/ns/t', sessionId }),
            () => lookup.listOwners({ group: '' }),
            () => admin.deleteTopic({ topic: victim }),
          ];
          for (const [index, call] of calls.entries()) {
            await call().catch((error: unknown) => expectWellRefused(`call ${index}`, LedgerlineError.from(error)));
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
