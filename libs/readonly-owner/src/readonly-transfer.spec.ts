import { LedgerlineError } from '@ledgerline/errors';
import { OwnerReason } from '@ledgerline/ownership';
import { TestConsumer } from '@ledgerline/ownership/testing';
import { InitialPosition, OwnerControlService, SubscriptionType } from '@ledgerline/proto';
import { ReadOnlyOwnerReason } from './reasons.js';
import { closeClient, createClient, type Client } from '@ledgerline/rpc';
import { READER_GROUP, startReadOnlyHarness, type ReadOnlyHarness } from './testing/index.js';

/*
 * A reader topic moved between the read-only owners of its group (issue 28:
 * the balancer moves read-only owners' topics too, by the same transfer): the
 * lease goes to the target by compare-and-set, the target loads the topic,
 * and only then the consumers here end with NOT_OWNER naming the target.
 * Their acks reach the writer first, so a consumer that follows the answer
 * starts where it left off: nothing redelivered, nothing skipped.
 */

function consumer(harness: ReadOnlyHarness, owner: number, topic: string): TestConsumer {
  const subscribed = new TestConsumer(harness.readOnlyTopics[owner]!, {
    case: 'subscribe',
    value: {
      topic,
      subscription: 'moving',
      type: SubscriptionType.EXCLUSIVE,
      consumerName: 'c',
      initialPosition: InitialPosition.EARLIEST,
    },
  });
  subscribed.flow(1_000);
  return subscribed;
}

function reasonOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (thrown: unknown) => LedgerlineError.from(thrown).reason,
  );
}

describe('a reader topic transferred between read-only owners', () => {
  let harness: ReadOnlyHarness;
  let controls: Client<typeof OwnerControlService>[];
  beforeAll(async () => {
    harness = await startReadOnlyHarness();
    await harness.addReadOnlyOwner();
    await harness.addReadOnlyOwner();
    controls = harness.readOnly.map((running) => createClient(OwnerControlService, `127.0.0.1:${running.port}`));
  });
  afterAll(async () => {
    for (const control of controls) closeClient(control);
    await harness.close();
  });

  it('sends its consumers straight to the target, which goes on from their acks', async () => {
    const { writerTopic, readerTopic } = await harness.createTopic('moving');
    const placed = await harness.lookup.lookupTopic({ topic: readerTopic, group: READER_GROUP });
    const from = harness.readOnly.findIndex(
      (running) => running.owner.identity.advertisedAddress === placed.advertisedAddress,
    );
    const to = 1 - from;
    // Subscribed before anything is published: with no subscription and no retention, ledgers already rolled
    // over (5 entries each here) may be trimmed before a later subscription could read them.
    const before = consumer(harness, from, readerTopic);
    await before.until(() => before.events.length > 0, 'the subscription answered');
    await harness.publishNumbered(writerTopic, 0, 10);
    await before.until(() => before.entries.length === 10, '10 entries before the move');
    before.ack(before.entries);

    const moved = await controls[from]!.transferTopic({ topic: readerTopic, targetInstanceId: '' });
    const target = harness.readOnly[to]!.owner.identity;
    expect([moved.targetInstanceId, moved.targetAddress]).toEqual([target.instanceId, target.advertisedAddress]);
    await before.until(() => before.ended || before.error !== undefined, 'the consumer told where the topic went');
    expect(before.error?.reason).toBe(OwnerReason.NOT_OWNER);
    expect(before.error?.details).toMatchObject({ owner_address: target.advertisedAddress });
    const lease = await harness.lookup.lookupTopic({ topic: readerTopic, group: READER_GROUP });
    expect([lease.advertisedAddress, lease.owned]).toEqual([target.advertisedAddress, true]);

    await harness.publishNumbered(writerTopic, 10, 5);
    const after = consumer(harness, to, readerTopic);
    await after.until(() => after.entries.length >= 5, '5 entries after the move');
    expect(after.texts()).toEqual(['m10', 'm11', 'm12', 'm13', 'm14']);
    after.close();
    before.close();
  });

  it('refuses a topic it does not hold: NOT_OWNER naming the holder, TOPIC_NOT_LOADED when nobody holds it', async () => {
    const { readerTopic } = await harness.createTopic('held');
    const placed = await harness.lookup.lookupTopic({ topic: readerTopic, group: READER_GROUP });
    const holder = harness.readOnly.findIndex(
      (running) => running.owner.identity.advertisedAddress === placed.advertisedAddress,
    );
    expect(await reasonOf(controls[holder]!.transferTopic({ topic: readerTopic }))).toBe(
      ReadOnlyOwnerReason.TOPIC_NOT_LOADED,
    );
    const held = consumer(harness, holder, readerTopic);
    await held.until(() => held.events.length > 0, 'the subscription answered');
    expect(await reasonOf(controls[1 - holder]!.transferTopic({ topic: readerTopic }))).toBe(OwnerReason.NOT_OWNER);
    held.close();
  });
});
