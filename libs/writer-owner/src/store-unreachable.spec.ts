import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InProcessBus } from '@ledgerline/bus';
import { SqliteLedgerStore } from '@ledgerline/ledger-store';
import { MetadataStoreManagedLedgerMetadata } from '@ledgerline/managed-ledger';
import { startMetadataService, type RunningMetadataService } from '@ledgerline/metadata-service';
import { SqliteMetadataStore } from '@ledgerline/metadata-store';
import { OwnerReason } from '@ledgerline/ownership';
import { ownersMetadataConfig, testServiceConfig } from '@ledgerline/ownership/testing';
import { AdminService, LookupService, OwnerControlService, type PublishMessage } from '@ledgerline/proto';
import { closeClient, createClient } from '@ledgerline/rpc';
import { eventually, refusal } from '@ledgerline/testing';
import pino from 'pino';
import { resolveWriterSettings } from './config.js';
import { WriterReason } from './reasons.js';
import type { Receipt } from './receipts.js';
import { startWriterOwnerService, type RunningWriterOwner } from './server.js';
import { CuttableLedgerStore } from './testing/cuttable-ledger-store.js';
import { noConsumers } from './testing/no-consumers.js';

/*
 * Issue 43, item 4: an owner that cannot reach its ledger store lets go.
 * Two writer owners share one metadata service and one ledger store; the
 * first one's view of the store can be cut (every call fails after a short
 * "command timeout", as a Redis cut off by the network does) while its
 * session with the metadata service lives on. Past storeUnreachableReleaseMs
 * without an answer it hands its topics to the other owner, answers what its
 * producers are owed NOT_OWNER naming that owner, and refuses LoadTopic until
 * the store answers again; a cut shorter than the bound moves nothing.
 */

const RELEASE_MS = 1_500;
const SETTINGS = resolveWriterSettings({ storeUnreachableReleaseMs: RELEASE_MS, ledgerStoreCheckIntervalMs: 100 });
/** Waits long enough for a move on a busy machine (about 30 s), checked every 50 ms. */
const WAIT = { attempts: 600, intervalMs: 50 };

function message(topic: string, sequenceId: bigint): PublishMessage {
  return { topic, producerName: 'p', sequenceId, payload: new TextEncoder().encode(`m${sequenceId}`) } as never;
}

describe('a writer owner that cannot reach its ledger store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-store-cut-'));
  const bus = new InProcessBus();
  const metadataStore = new SqliteMetadataStore({ path: join(dir, 'metadata.db'), bus, synchronous: 'NORMAL' });
  const shared = new SqliteLedgerStore({ path: join(dir, 'ledgers.db'), synchronous: 'NORMAL' });
  const cuttable = new CuttableLedgerStore(shared);
  let metadata: RunningMetadataService;
  let cutOwner: RunningWriterOwner;
  let otherOwner: RunningWriterOwner | undefined;
  let admin: ReturnType<typeof createClient<typeof AdminService>>;

  async function startWriter(ledgerStore: CuttableLedgerStore | SqliteLedgerStore): Promise<RunningWriterOwner> {
    return startWriterOwnerService({
      config: testServiceConfig(),
      settings: SETTINGS,
      metadataAddress: `127.0.0.1:${metadata.port}`,
      ledgerStore,
      metadata: new MetadataStoreManagedLedgerMetadata(metadataStore),
      bus,
      consumeBackend: noConsumers,
      logger: pino({ level: 'silent' }),
      signals: [],
    });
  }

  async function createTopic(local: string): Promise<string> {
    const name = `persistent://t/ns/${local}`;
    await admin.createTopic({ topic: name });
    return name;
  }

  /** Who the metadata service names for `topic` now. */
  async function lookedUp(topic: string): Promise<string> {
    const lookup = createClient(LookupService, `127.0.0.1:${metadata.port}`);
    try {
      return (await lookup.lookupTopic({ topic })).advertisedAddress;
    } finally {
      closeClient(lookup);
    }
  }

  beforeAll(async () => {
    metadata = await startMetadataService({
      store: metadataStore,
      bus,
      config: ownersMetadataConfig(),
      signals: [],
    });
    admin = createClient(AdminService, `127.0.0.1:${metadata.port}`);
    await admin.createTenant({ tenant: 't' });
    await admin.createNamespace({ namespace: 't/ns' });
    cutOwner = await startWriter(cuttable);
  });

  afterAll(async () => {
    cuttable.heal();
    closeClient(admin);
    await otherOwner?.shutdown('test finished');
    await cutOwner.shutdown('test finished');
    await metadata.shutdown('test finished');
    await shared.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps its topics across a cut shorter than the bound', async () => {
    const topic = await createTopic('short-cut');
    const owned = await cutOwner.owner.topic(topic);
    await owned.publish(message(topic, 0n));
    cuttable.cutOff();
    const publishing = owned.publish(message(topic, 1n));
    // A few tries failed, far fewer than the bound's worth.
    await eventually(() => cuttable.failedCalls >= 2, { ...WAIT, description: 'tries failing during the cut' });
    cuttable.heal();
    const receipt = await publishing;
    expect([receipt.duplicate, receipt.firstOffset]).toEqual([false, 1]);
    expect(cutOwner.owner.storeReachable).toBe(true);
    expect(cutOwner.owner.registry.find(topic)).toBe(owned);
    expect(owned.unloaded).toBe(false);
  });

  it('hands its topics to an owner that can write past the bound, refuses LoadTopic meanwhile, and takes topics after', async () => {
    const topic = await createTopic('long-cut');
    const owned = await cutOwner.owner.topic(topic);
    const first = await owned.publish(message(topic, 0n));
    otherOwner = await startWriter(shared);
    const otherAddress = otherOwner.owner.identity.advertisedAddress;

    cuttable.cutOff();
    const owed = owned.publish(message(topic, 1n));
    // The producer is told where to go, long before any client's operation timeout.
    const refused = await refusal(owed);
    expect([refused.code, refused.reason, refused.details['owner_address']]).toEqual([
      'FAILED_PRECONDITION',
      OwnerReason.NOT_OWNER,
      otherAddress,
    ]);
    expect(cutOwner.owner.storeReachable).toBe(false);
    expect(cutOwner.owner.registry.find(topic)).toBeUndefined();
    expect(await lookedUp(topic)).toBe(otherAddress);
    const { metrics } = cutOwner.owner;
    expect((await metrics.ledgerStoreReachable.get()).values[0]?.value).toBe(0);
    await eventually(
      async () =>
        (await metrics.storeUnreachableReleases.get()).values.some(
          (v) => v.labels['outcome'] === 'moved' && v.value > 0,
        ),
      { ...WAIT, description: 'the move counted' },
    );

    // The resend goes to the new owner: stored once, right after what the old owner stored.
    const moved = await otherOwner.owner.topic(topic);
    const resent: Receipt = await moved.publish(message(topic, 1n));
    expect([resent.duplicate, resent.firstOffset]).toEqual([false, first.firstOffset + 1]);
    expect((await moved.publish(message(topic, 1n))).duplicate).toBe(true);

    // While the store stays away: no topic is loaded here, a transfer's LoadTopic included.
    const control = createClient(OwnerControlService, `127.0.0.1:${cutOwner.port}`);
    try {
      const loadRefused = await refusal(control.loadTopic({ topic: await createTopic('not-here') }));
      expect([loadRefused.code, loadRefused.reason]).toEqual(['UNAVAILABLE', WriterReason.STORE_UNREACHABLE]);
    } finally {
      closeClient(control);
    }
    const other = await refusal(cutOwner.owner.topic(topic));
    expect([other.code, other.reason]).toEqual(['FAILED_PRECONDITION', OwnerReason.NOT_OWNER]);

    cuttable.heal();
    await eventually(() => cutOwner.owner.storeReachable, { ...WAIT, description: 'the store answering again' });
    expect((await metrics.ledgerStoreReachable.get()).values[0]?.value).toBe(1);
    // Taken again: the topic moves back by transfer, and the next entry follows on.
    const back = await otherOwner.owner.transfer(topic, cutOwner.owner.identity.instanceId);
    expect(back.targetInstanceId).toBe(cutOwner.owner.identity.instanceId);
    const again = await (await cutOwner.owner.topic(topic)).publish(message(topic, 2n));
    expect([again.duplicate, again.firstOffset]).toEqual([false, first.firstOffset + 2]);
  }, 60_000);

  it('unloads its topics and releases their leases when no other owner can take them', async () => {
    await otherOwner?.shutdown('leaving the cut owner alone');
    otherOwner = undefined;
    const topic = await createTopic('alone');
    const owned = await cutOwner.owner.topic(topic);
    await owned.publish(message(topic, 0n));

    cuttable.cutOff();
    const refused = await refusal(owned.publish(message(topic, 1n)));
    expect([refused.code, refused.reason]).toEqual(['UNAVAILABLE', OwnerReason.TOPIC_UNLOADED]);
    expect(cutOwner.owner.registry.find(topic)).toBeUndefined();
    // The lookup has nobody else to name: the owner says why it will not take the topic.
    const notTaken = await refusal(cutOwner.owner.topic(topic));
    expect([notTaken.code, notTaken.reason]).toEqual(['UNAVAILABLE', WriterReason.STORE_UNREACHABLE]);

    cuttable.heal();
    await eventually(() => cutOwner.owner.storeReachable, { ...WAIT, description: 'the store answering again' });
    // Loaded afresh (fencing the ledger it left open): the resend is stored once, right after entry 0, whether
    // its first append landed before the fence (a duplicate then) or not.
    const resent = await (await cutOwner.owner.topic(topic)).publish(message(topic, 1n));
    expect(resent.firstOffset).toBe(1);
    const next = await (await cutOwner.owner.topic(topic)).publish(message(topic, 2n));
    expect([next.duplicate, next.firstOffset]).toEqual([false, 2]);
  }, 60_000);
});
