import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { managedLedgerPath, TopicName } from '@ledgerline/naming';
import {
  LedgerInfoSchema,
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  ManagedLedgerState,
} from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import fc from 'fast-check';
import { CrashingStore, WriteGate } from './testing/crashing-store.js';
import { DEFAULT_RECOUNT_SETTLE_MS } from './limits.js';
import { MetadataAdmin } from './metadata-admin.js';
import { inspectNamespace } from './testing/namespace-inspection.js';
import { failure, sqliteFixture, type SqliteFixture } from './testing/spec-support.js';

const BUCKETS = 3;
const NAMES = ['a', 'b', 'c', 'd'];

type Op =
  | { kind: 'create'; name: string }
  | { kind: 'partitioned'; name: string }
  | { kind: 'batch'; names: string[] }
  | { kind: 'delete'; name: string }
  | { kind: 'ledger'; name: string };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom(...NAMES).map((name) => ({ kind: 'create' as const, name })),
  fc.constantFrom(...NAMES).map((name) => ({ kind: 'partitioned' as const, name })),
  fc.subarray(NAMES, { minLength: 1 }).map((names) => ({ kind: 'batch' as const, names })),
  fc.constantFrom(...NAMES).map((name) => ({ kind: 'delete' as const, name })),
  fc.constantFrom(...NAMES).map((name) => ({ kind: 'ledger' as const, name })),
);

/** Refusals an operation may meet before the crash; anything else is a bug. */
const EXPECTED_REFUSALS = new Set(['TOPIC_EXISTS', 'TOPIC_NOT_FOUND', 'TOO_MANY_TOPICS', 'TOPIC_CREATE_CONFLICT']);

describe('crash consistency of topic creation and deletion', () => {
  let fixture: SqliteFixture;
  let namespaces = 0;
  let nextLedgerId = 1000n;

  beforeAll(async () => {
    fixture = sqliteFixture();
    await fixture.admin.createTenant('crash');
  });
  afterAll(async () => {
    await fixture.close();
  });

  /** A service process over the same store that dies after `writes` writes. */
  function dyingAdmin(writes: number, lastWriteLands = false) {
    const store = new CrashingStore(fixture.store, writes, { lastWriteLands });
    return { store, admin: new MetadataAdmin(store, { now: fixture.clock.now }) };
  }

  async function freshNamespace(maxTopics = 0): Promise<string> {
    const namespace = `crash/ns-${namespaces++}`;
    await fixture.admin.createNamespace(namespace, { numberOfTopicBuckets: BUCKETS, maxTopics });
    return namespace;
  }

  /**
   * Gives a live topic one more ledger and a cursor with its own ledger, as its
   * writer owner would (another process: it does not crash).
   */
  async function addLedgers(namespace: string, name: string): Promise<bigint[]> {
    const path = managedLedgerPath(TopicName.parse(`${namespace}/${name}`), BUCKETS);
    const node = await fixture.store.get(path);
    if (node === undefined) return [];
    const info = fromBinary(ManagedLedgerInfoSchema, node.value);
    if (info.state === ManagedLedgerState.DELETING) return [];
    const ledgerId = nextLedgerId++;
    const cursorLedgerId = nextLedgerId++;
    info.ledgerInfo.push(create(LedgerInfoSchema, { ledgerId }));
    try {
      await fixture.store.put(path, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion: node.version });
    } catch (error) {
      if (LedgerlineError.is(error, 'BAD_VERSION')) return [];
      throw error;
    }
    const cursor = create(ManagedCursorInfoSchema, { cursorsLedgerId: cursorLedgerId });
    await fixture.store.put(`${path}/sub-${cursorLedgerId}`, toBinary(ManagedCursorInfoSchema, cursor));
    return [ledgerId, cursorLedgerId];
  }

  async function listAll(namespace: string): Promise<string[]> {
    const topics: string[] = [];
    let pageToken = '';
    for (let page = 0; page < 100; page++) {
      const result = await fixture.admin.listTopics(namespace, pageToken, 2);
      topics.push(...result.topics);
      pageToken = result.nextPageToken;
      if (pageToken === '') return topics;
    }
    throw new Error('the listing did not end');
  }

  /** After a restart and a recount: the count, the listing and the store agree, and no ledger is lost. */
  async function expectConsistent(namespace: string, ledgers: Set<bigint>): Promise<number> {
    fixture.clock.advance(DEFAULT_RECOUNT_SETTLE_MS + 1);
    const recount = await fixture.admin.recountTopics(namespace);
    expect(recount.skipped).toBeUndefined();
    const contents = await inspectNamespace(fixture.store, namespace, BUCKETS);
    expect(await fixture.admin.countTopics(namespace)).toBe(contents.live.length);
    expect(await listAll(namespace)).toEqual(contents.live.map((name) => `persistent://${namespace}/${name}`));
    for (const name of contents.deleting.keys()) expect(contents.markers).toContain(name);
    for (const ledgerId of ledgers) expect(contents.referencedLedgers).toContain(ledgerId);
    for (const name of contents.partitioned) expect(contents.live).not.toContain(name);
    return contents.live.length;
  }

  /** With `room` slots left under maxTopics, exactly `room` of more parallel creates succeed. */
  async function expectExactLimit(namespace: string, live: number, room: number): Promise<void> {
    await fixture.admin.updateNamespace(namespace, { maxTopics: live + room });
    const outcomes = await Promise.allSettled(
      Array.from({ length: room + 3 }, (_, index) => fixture.admin.createTopic(`${namespace}/extra-${index}`)),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(room);
    expect(await fixture.admin.countTopics(namespace)).toBe(live + room);
  }

  it('repairs a counter left high by a crash between the reservation and the node write', async () => {
    const namespace = await freshNamespace(3);
    // Write 1 reserves the slot on the counter; the process dies on write 2, the topic's node.
    const dying = dyingAdmin(1);
    expect(await failure(dying.admin.createTopic(`${namespace}/lost`))).toMatchObject({ reason: 'PROCESS_CRASHED' });
    await dying.store.drained();
    expect(await fixture.admin.countTopics(namespace)).toBe(1);
    expect(await fixture.store.exists(managedLedgerPath(TopicName.parse(`${namespace}/lost`), BUCKETS))).toBe(false);
    // Until the recount the limit errs on the safe side: two more fit, not three.
    await fixture.admin.createTopics([`${namespace}/x`, `${namespace}/y`]);
    expect(await failure(fixture.admin.createTopic(`${namespace}/z`))).toMatchObject({ reason: 'TOO_MANY_TOPICS' });
    const live = await expectConsistent(namespace, new Set());
    expect(live).toBe(2);
    await expectExactLimit(namespace, live, 1);
  });

  it('finishes a deletion that a crash interrupted at any write, leaking no ledger', async () => {
    for (let writes = 0; writes < 6; writes++) {
      const namespace = await freshNamespace();
      await fixture.admin.createTopic(`${namespace}/t`);
      await fixture.admin.createTopic(`${namespace}/keep`);
      const ledgers = new Set(await addLedgers(namespace, 't'));
      const dying = dyingAdmin(writes, writes % 2 === 1);
      await dying.admin.deleteTopic(`${namespace}/t`).catch((error: unknown) => {
        expect(error).toMatchObject({ reason: 'PROCESS_CRASHED' });
      });
      await dying.store.drained();
      // The restarted service deletes it again: done now, or already marked by the dead process.
      await fixture.admin.deleteTopic(`${namespace}/t`).catch((error: unknown) => {
        expect(error).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
      });
      expect(await expectConsistent(namespace, ledgers)).toBe(1);
      const contents = await inspectNamespace(fixture.store, namespace, BUCKETS);
      expect(contents.deleting.get('t')?.sort()).toEqual([...ledgers].sort());
      await expectExactLimit(namespace, 1, 2);
    }
  });

  it('lets a namespace go once the garbage collector removed what deleted topics left', async () => {
    const namespace = await freshNamespace();
    await fixture.admin.createTopic(`${namespace}/t`);
    await addLedgers(namespace, 't');
    await fixture.admin.deleteTopic(`${namespace}/t`);
    expect(await failure(fixture.admin.deleteNamespace(namespace))).toMatchObject({
      reason: 'NAMESPACE_HAS_PENDING_DELETIONS',
    });
    // The garbage collector deleted the ledgers and then the node (through the store API).
    await fixture.store.delete(managedLedgerPath(TopicName.parse(`${namespace}/t`), BUCKETS));
    await fixture.admin.deleteNamespace(namespace);
    expect(await failure(fixture.admin.getNamespace(namespace))).toMatchObject({ reason: 'NAMESPACE_NOT_FOUND' });
  });

  it('finishes creating and deleting a namespace and its tenant whatever write a crash interrupts, leaving nothing behind', async () => {
    for (let writes = 0; writes < 10; writes++) {
      const tenant = `crash-tenant-${writes}`;
      await fixture.admin.createTenant(tenant);
      const namespace = `${tenant}/ns`;
      const creating = dyingAdmin(writes, writes % 2 === 0);
      await creating.admin.createNamespace(namespace, { numberOfTopicBuckets: BUCKETS }).catch(() => undefined);
      await creating.store.drained();
      await fixture.admin.createNamespace(namespace, { numberOfTopicBuckets: BUCKETS }).catch((error: unknown) => {
        expect(error).toMatchObject({ reason: 'NAMESPACE_EXISTS' });
      });
      await fixture.admin.createTopic(`${namespace}/t`);
      await fixture.admin.deleteTopic(`${namespace}/t`);
      const deleting = dyingAdmin(writes, writes % 2 === 1);
      await deleting.admin.deleteNamespace(namespace).catch(() => undefined);
      await deleting.store.drained();
      await fixture.admin.deleteNamespace(namespace).catch((error: unknown) => {
        expect(error).toMatchObject({ reason: 'NAMESPACE_NOT_FOUND' });
      });
      const leaving = dyingAdmin(writes % 2, true);
      await leaving.admin.deleteTenant(tenant).catch(() => undefined);
      await leaving.store.drained();
      await fixture.admin.deleteTenant(tenant).catch((error: unknown) => {
        expect(error).toMatchObject({ reason: 'TENANT_NOT_FOUND' });
      });
      expect(await fixture.store.exists(`/admin/tenants/${tenant}`)).toBe(false);
      expect(await fixture.store.exists(`/managed-ledgers/${tenant}`)).toBe(false);
      for (const root of ['/admin/namespaces', '/admin/topic-counts', '/admin/deleting-topics', '/managed-ledgers']) {
        expect(await fixture.store.exists(`${root}/${namespace}`)).toBe(false);
        expect((await fixture.store.children(`${root}/${tenant}`)).names).toEqual([]);
      }
      expect((await fixture.store.children(`/managed-ledgers/${namespace}/persistent`)).names).toEqual([]);
    }
  });

  it('keeps the counter exact when a recount runs while a deletion is between its mark and its release', async () => {
    const namespace = await freshNamespace(2);
    await fixture.admin.createTopics([`${namespace}/a`, `${namespace}/b`]);
    // A deleting process that stalls right before it gives the topic's slot back.
    const gate = new WriteGate(fixture.store, `/admin/topic-counts/${namespace}`);
    const deleting = new MetadataAdmin(gate, { now: fixture.clock.now });
    const deletion = deleting.deleteTopic(`${namespace}/b`);
    await gate.reached;
    fixture.clock.advance(DEFAULT_RECOUNT_SETTLE_MS + 1);
    await fixture.admin.recountTopics(namespace);
    gate.open();
    await deletion;
    expect(await fixture.admin.countTopics(namespace)).toBe(1);
    await expectExactLimit(namespace, 1, 1);
  });

  it('stays consistent whatever write a crash interrupts in a run of creates and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArbitrary, { minLength: 2, maxLength: 10 }),
        fc.nat({ max: 40 }),
        fc.boolean(),
        async (ops, writes, lastWriteLands) => {
          const namespace = await freshNamespace();
          const ledgers = new Set<bigint>();
          const dying = dyingAdmin(writes, lastWriteLands);
          // Topics whose last operation was a delete: the restarted service runs those deletes again.
          const deleted = new Set<string>();
          for (const op of ops) {
            if (op.kind === 'delete') deleted.add(op.name);
            else if (op.kind !== 'ledger') for (const name of 'name' in op ? [op.name] : op.names) deleted.delete(name);
            if (op.kind === 'ledger') {
              for (const id of await addLedgers(namespace, op.name)) ledgers.add(id);
              continue;
            }
            try {
              await runOp(dying.admin, namespace, op);
            } catch (error) {
              if (dying.store.crashed) break;
              expect(EXPECTED_REFUSALS).toContain(LedgerlineError.from(error).reason);
            }
          }
          await dying.store.drained();
          for (const name of deleted) {
            await fixture.admin.deleteTopic(`${namespace}/${name}`).catch((error: unknown) => {
              expect(error).toMatchObject({ reason: 'TOPIC_NOT_FOUND' });
            });
          }
          const live = await expectConsistent(namespace, ledgers);
          await expectExactLimit(namespace, live, 2);
        },
      ),
      { numRuns: 40 },
    );
  });
});

async function runOp(admin: MetadataAdmin, namespace: string, op: Exclude<Op, { kind: 'ledger' }>): Promise<void> {
  switch (op.kind) {
    case 'create':
      await admin.createTopic(`${namespace}/${op.name}`);
      return;
    case 'partitioned':
      await admin.createTopic(`${namespace}/${op.name}`, 2);
      return;
    case 'batch': {
      const results = await admin.createTopics(op.names.map((name) => `${namespace}/${name}`));
      const failed = results.find((result) => !result.created && !EXPECTED_REFUSALS.has(result.errorReason));
      if (failed !== undefined) throw new LedgerlineError('UNAVAILABLE', failed.errorReason, failed.errorMessage);
      return;
    }
    case 'delete':
      await admin.deleteTopic(`${namespace}/${op.name}`);
      return;
  }
}
