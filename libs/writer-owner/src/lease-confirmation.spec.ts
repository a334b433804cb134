import { closeClient, createClient } from '@ledgerline/rpc';
import { LookupService, OwnerRole } from '@ledgerline/proto';
import { eventually } from '@ledgerline/testing';
import { noConsumers } from './testing/no-consumers.js';
import { startWriterHarness, type WriterHarness } from './testing/harness.js';

/*
 * An owner re-confirms the leases of every topic it holds each half TTL, in
 * one ConfirmLeases call, and unloads at once a topic whose lease another
 * owner holds now, while the others keep serving.
 */
describe('writer owner: the periodic check of its leases', () => {
  let harness: WriterHarness;
  beforeAll(async () => {
    harness = await startWriterHarness({ consumeBackend: noConsumers, settings: { leaseTtlMs: 3_000 } });
  });
  afterAll(async () => harness.close());

  it('unloads the topic whose lease went to another owner and keeps the rest', async () => {
    const topics: string[] = [];
    for (const name of ['kept-1', 'taken', 'kept-2']) topics.push(await harness.createTopic(name));
    for (const topic of topics) await harness.writer.owner.topic(topic);
    const [kept1, taken, kept2] = topics as [string, string, string];
    const lookup = createClient(LookupService, `127.0.0.1:${harness.metadata.port}`);
    try {
      const thief = await lookup.registerOwner({
        owner: { instanceId: 'thief', role: OwnerRole.WRITER, group: 'default', advertisedAddress: '127.0.0.1:1' },
        sessionTtlMs: 60_000n,
      });
      const holder = (harness.writer.owner as unknown as { session: { sessionId: string } }).session.sessionId;
      // Another owner holds the lease now, without this owner moving the topic (as after a partition healed).
      await lookup.transferLease({ topic: taken, sessionId: holder, targetInstanceId: 'thief' });
      await lookup.acquireLease({ topic: taken, sessionId: thief.sessionId });
      const registry = harness.writer.owner.registry;
      // Each half TTL (1.5 s): 100 checks 100 ms apart leave several rounds.
      await eventually(() => registry.find(taken) === undefined, { attempts: 100, intervalMs: 100 });
      expect(registry.find(kept1)).toBeDefined();
      expect(registry.find(kept2)).toBeDefined();
    } finally {
      closeClient(lookup);
    }
  });
});
