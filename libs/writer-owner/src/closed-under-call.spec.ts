import { OwnerReason } from '@ledgerline/ownership';
import { refusal } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

/*
 * A topic being unloaded or moved closes its managed ledger before the
 * registry forgets it, so a call that finds the topic can meet the ledger
 * closed. The client must be told to look the topic up again (UNAVAILABLE /
 * TOPIC_UNLOADED), not that its request cannot succeed (FAILED_PRECONDITION),
 * which a read-back during a rolling restart of the owners once got.
 */
describe('writer owner: a call that meets its topic closing under it', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers });
  });
  afterAll(async () => harness.close());

  it('answers seek, findPosition and fetchByOffset with TOPIC_UNLOADED', async () => {
    const topic = await harness.createTopic('closing');
    const owned = await harness.writer.owner.topic(topic);
    await owned.ledger.openCursor('sub');
    await owned.publish({ topic, producerName: '', sequenceId: 0n, payload: new TextEncoder().encode('m0') } as never);
    // The ledger closes first, as an unload's closeLedger does, while the topic is still registered here.
    await owned.ledger.close();
    const calls = [
      harness.topics.seek({ topic, subscription: 'sub', target: { case: 'offset', value: 0n } }),
      harness.topics.findPosition({ topic, target: { case: 'offset', value: 0n } }),
      harness.topics.fetchByOffset({ topic, offset: 0n, maxEntries: 1 }),
    ];
    for (const call of calls) {
      const refused = await refusal(call);
      expect([refused.code, refused.reason]).toEqual(['UNAVAILABLE', OwnerReason.TOPIC_UNLOADED]);
    }
  });
});
