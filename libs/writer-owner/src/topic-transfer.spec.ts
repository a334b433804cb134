import { refusal } from '@ledgerline/testing';
import { WriterReason } from './reasons.js';
import { noConsumers } from './testing/no-consumers.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

describe('writer owner: a transfer asked for while the topic is still loading', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers });
  });
  afterAll(async () => harness.close());

  it('waits for the load and goes on with the transfer instead of answering that the topic is not loaded', async () => {
    const topic = await harness.createTopic('loading');
    const owner = harness.writer.owner;
    // A producer's first publish starts the load; the lease already names this owner, so a lookup
    // (and an operator's `topics transfer`) can reach here before the ledger is open.
    const loading = owner.topic(topic);
    const refused = await refusal(owner.transfer(topic, 'no-such-instance'));
    await loading;
    // The transfer reached the metadata service, which knows no such target; before, it stopped here.
    expect(refused.reason).not.toBe(WriterReason.TOPIC_NOT_LOADED);
    expect([refused.code, refused.reason]).toEqual(['FAILED_PRECONDITION', 'NO_LIVE_OWNER']);
  });

  it('still answers NOT_FOUND / TOPIC_NOT_LOADED for a topic nobody owns', async () => {
    const topic = await harness.createTopic('unowned');
    const refused = await refusal(harness.writer.owner.transfer(topic, 'no-such-instance'));
    expect([refused.code, refused.reason]).toEqual(['NOT_FOUND', WriterReason.TOPIC_NOT_LOADED]);
  });
});
