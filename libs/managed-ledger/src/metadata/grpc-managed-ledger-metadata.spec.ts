import { LEDGER_ID_SEQUENCE } from '@ledgerline/naming';
import type { Server } from '@grpc/grpc-js';
import { LookupService, MetadataStoreService } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { bindInsecure, createGrpcServer, registerService, type ServiceImpl } from '@ledgerline/rpc';
import { GrpcManagedLedgerMetadata } from './grpc-managed-ledger-metadata.js';
import { ManagedLedger } from '../managed-ledger.js';
import { payloadOf, testBackends, textOf } from '../testing/fixtures.js';
import { InMemoryLedgerStore } from '../testing/in-memory-ledger-store.js';
import { InMemoryMetadataStore } from '../testing/in-memory-metadata-store.js';

// A reason of this test server only: calls the test does not make.
const SPEC_REASON = { NOT_IN_TEST: 'NOT_IN_TEST' } as const;

/** The metadata service's store API over an in-memory store: just enough of apps/metadata for this client. */
function metadataStoreService(store: InMemoryMetadataStore): ServiceImpl<typeof MetadataStoreService> {
  return {
    async get({ path }) {
      const node = await store.get(path);
      return node === undefined ? {} : { node: { value: node.value, version: BigInt(node.version) } };
    },
    async exists({ path }) {
      return { exists: await store.exists(path) };
    },
    async put({ path, value, expected }) {
      const expectedVersion =
        expected.case === 'expectAbsent'
          ? ('absent' as const)
          : expected.case === 'expectedVersion'
            ? Number(expected.value)
            : undefined;
      return {
        version: BigInt(await store.put(path, value, expectedVersion === undefined ? {} : { expectedVersion })),
      };
    },
    async delete({ path, expectedVersion }) {
      await store.delete(path, expectedVersion === undefined ? {} : { expectedVersion: Number(expectedVersion) });
      return {};
    },
    async children({ path, pageToken, pageSize }) {
      const page = await store.children(path, {
        ...(pageToken === '' ? {} : { after: pageToken }),
        limit: pageSize || 1000,
      });
      return { names: page.names, nextPageToken: page.next ?? '' };
    },
    async *watch() {
      // Not used by the managed ledger.
    },
  };
}

function lookupService(store: InMemoryMetadataStore): ServiceImpl<typeof LookupService> {
  const unused = () => {
    throw new LedgerlineError('UNIMPLEMENTED', SPEC_REASON.NOT_IN_TEST, 'not part of this test server');
  };
  return {
    registerOwner: unused,
    keepAliveOwner: unused,
    watchOwnerSession: unused,
    unregisterOwner: unused,
    listOwners: unused,
    acquireLease: unused,
    renewLease: unused,
    confirmLeases: unused,
    releaseLease: unused,
    getLease: unused,
    transferLease: unused,
    reclaimLease: unused,
    setOwnerDraining: unused,
    lookupTopic: unused,
    allocateLedgerId: async () => ({ ledgerId: BigInt(await store.nextId(LEDGER_ID_SEQUENCE)) }),
  };
}

describe('GrpcManagedLedgerMetadata', () => {
  let server: Server;
  let address: string;
  const store = new InMemoryMetadataStore();

  beforeAll(async () => {
    server = createGrpcServer();
    registerService(server, MetadataStoreService, metadataStoreService(store));
    registerService(server, LookupService, lookupService(store));
    address = `127.0.0.1:${await bindInsecure(server, '127.0.0.1', 0)}`;
  });
  afterAll(() => server.forceShutdown());

  it('runs a managed ledger and its cursors over the metadata service', async () => {
    const metadata = GrpcManagedLedgerMetadata.connect(address);
    const ledgerStore = new InMemoryLedgerStore();
    const deps = { ...testBackends({ ledgerStore }).deps(), metadata };
    const config = {
      maxEntriesPerLedger: 4,
      minLedgerAgeMs: 0,
      maintenanceIntervalMs: 0,
      retentionTimeMs: -1,
      retentionSizeBytes: -1,
    };
    const ml = await ManagedLedger.open('persistent://acme/grpc/t', deps, { config });
    const cursor = await ml.openCursor('a b/c', { start: { initialPosition: 'earliest' } });
    const written = await Promise.all(Array.from({ length: 10 }, (_, i) => ml.append(payloadOf(`g${i}`))));
    cursor.ack([written[1]!.position, written[6]!.position]);
    await ml.close();
    const reopened = await ManagedLedger.open('persistent://acme/grpc/t', deps, { config });
    const recovered = reopened.getCursor('a b/c')!;
    expect(recovered.exportState().ackedRanges.length).toBe(2);
    // A page of 4 entries with g1 acknowledged gives 3.
    expect((await recovered.readEntries({ maxEntries: 4 })).map((e) => textOf(e.payload))).toEqual(['g0', 'g2', 'g3']);
    expect((await reopened.append(payloadOf('next'))).firstOffset).toBe(10);
    const page = await metadata.listCursors(reopened.path, { limit: 1 });
    expect(page.names).toEqual(['a b/c']);
    await reopened.close();
    metadata.close();
  });

  it('maps a lost compare-and-set to BAD_VERSION and a missing node to undefined', async () => {
    const metadata = GrpcManagedLedgerMetadata.connect(address);
    expect(await metadata.getManagedLedgerInfo('/managed-ledgers/x/y/persistent/none')).toBeUndefined();
    const info = (await metadata.getManagedLedgerInfo('/managed-ledgers/acme/grpc/persistent/t'))!;
    await expect(
      metadata.putManagedLedgerInfo('/managed-ledgers/acme/grpc/persistent/t', info.value, info.version + 5),
    ).rejects.toMatchObject({
      code: 'ABORTED',
      reason: 'BAD_VERSION',
    });
    expect(await metadata.allocateLedgerId()).toBeGreaterThan(0);
    metadata.close();
  });
});
