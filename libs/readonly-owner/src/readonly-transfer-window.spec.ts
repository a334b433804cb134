import type { ReadOnlyManagedLedger } from '@ledgerline/managed-ledger';
import { OwnerReason } from '@ledgerline/ownership';
import type { LedgerlineError } from '@ledgerline/errors';
import { ReadOnlyTopic, type ReadOnlyTopicOptions } from './readonly-topic.js';
import { transferReadOnlyTopic } from './readonly-transfer.js';

// The lease checks of a read-only owner leave a topic alone while it hands
// over (topic-registry.ts): the transfer gives the lease away itself, and a
// check that saw it gone first would unload the topic with TOPIC_UNLOADED, so
// its consumers would look the topic up again instead of going straight to
// the target. This pins the window the mark covers: from before the lease
// moves until the consumers are told where the topic went.

const quiet = { info: () => undefined, warn: () => undefined };

function topicUnder(unloadedWith: (error: LedgerlineError | undefined) => void): ReadOnlyTopic {
  const view = { onDeleted: () => undefined, close: () => undefined } as unknown as ReadOnlyManagedLedger;
  const options = {
    readerTopic: 'persistent://t/readers/moving',
    writerTopic: 'persistent://t/writers/moving',
    view,
    logger: quiet,
    onUnloaded: () => undefined,
  } as unknown as ReadOnlyTopicOptions;
  const topic = new ReadOnlyTopic(options);
  const unload = topic.unload.bind(topic);
  topic.unload = (why, error) => {
    unloadedWith(error);
    return unload(why, error);
  };
  return topic;
}

describe('a read-only topic being transferred', () => {
  it('is marked as handing over from before its lease moves until its consumers are told, then no longer', async () => {
    const seen: string[] = [];
    let unloadError: LedgerlineError | undefined;
    const topic = topicUnder((error) => (unloadError = error));
    let targetLoaded!: () => void;
    const context = {
      lookup: {
        transferLease: async () => {
          seen.push(`lease handed over while handingOver=${topic.handingOver}`);
          return { lease: { instanceId: 'target', advertisedAddress: '127.0.0.1:7001', version: 1n } };
        },
      },
      session: { sessionId: 'session-a' },
      peers: {
        control: () => ({
          loadTopic: () =>
            new Promise<void>((resolve) => {
              seen.push(`target loading while handingOver=${topic.handingOver}`);
              targetLoaded = resolve;
            }),
        }),
      },
      timeoutMs: 5_000,
      logger: quiet,
    };

    expect(topic.handingOver).toBe(false);
    const moving = transferReadOnlyTopic(context as never, topic, 'target');
    await new Promise((resolve) => setImmediate(resolve));
    expect(topic.handingOver).toBe(true);
    targetLoaded();
    const outcome = await moving;

    expect(seen).toEqual(['lease handed over while handingOver=true', 'target loading while handingOver=true']);
    expect(outcome).toMatchObject({ targetInstanceId: 'target', targetAddress: '127.0.0.1:7001' });
    expect(unloadError?.reason).toBe(OwnerReason.NOT_OWNER);
    expect(topic.isUnloaded).toBe(true);
    expect(topic.handingOver).toBe(false);
  });

  it('is no longer marked once a transfer fails, so lease checks watch it again', async () => {
    const topic = topicUnder(() => undefined);
    const context = {
      lookup: {
        transferLease: async () => {
          throw new Error('the metadata service is unreachable');
        },
      },
      session: { sessionId: 'session-a' },
      peers: { control: () => ({ loadTopic: async () => undefined }) },
      timeoutMs: 5_000,
      logger: quiet,
    };
    await expect(transferReadOnlyTopic(context as never, topic, 'target')).rejects.toThrow('unreachable');
    expect(topic.handingOver).toBe(false);
    expect(topic.isUnloaded).toBe(false);
  });
});
