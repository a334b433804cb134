import { transferEverything, type DrainContext } from './owner-drain.js';
import type { OwnedTopic } from './owned-topic.js';
import type { TopicRegistry } from './topic-registry.js';
import { resolveWriterSettings } from './config.js';

/** A drain over `names` whose transfers each take a turn, counting how many run at once. */
function drainOf(names: string[], concurrency: number) {
  const topics = names.map((name) => ({ name, unloaded: false, handingOver: false }) as unknown as OwnedTopic);
  const seen = { started: [] as string[], running: 0, most: 0 };
  const registry = {
    all: () => topics,
    acceptNewTopics: () => undefined,
    unloadTopic: async () => undefined,
    releaseLease: async () => undefined,
  } as unknown as TopicRegistry;
  const quiet = { info: () => undefined, warn: () => undefined };
  const context: DrainContext = {
    registry,
    lookup: { setOwnerDraining: async () => ({}) } as unknown as DrainContext['lookup'],
    session: { sessionId: 's' },
    concurrency,
    warmTargets: async () => undefined,
    logger: quiet,
    transfer: async (topic) => {
      seen.started.push(topic.name);
      seen.most = Math.max(seen.most, ++seen.running);
      await new Promise((resolve) => setImmediate(resolve));
      seen.running--;
      return {} as Awaited<ReturnType<DrainContext['transfer']>>;
    },
  };
  return { context, seen };
}

describe('a drain moving topics off its owner', () => {
  it('moves every topic once, in order, never more than the bound at once', async () => {
    const names = ['t1', 't2', 't3', 't4', 't5', 't6', 't7'];
    const { context, seen } = drainOf(names, 3);
    const outcome = await transferEverything(context);
    expect(seen.started).toEqual(names);
    expect(seen.most).toBe(3);
    expect(outcome).toEqual({ transferred: 7, unloaded: 0 });
  });

  it('takes no bound below one from its settings, and finishes at once with no topics', async () => {
    expect(() => resolveWriterSettings({ drainTransferConcurrency: 0 })).toThrow();
    const { context, seen } = drainOf([], 4);
    await expect(transferEverything(context)).resolves.toEqual({ transferred: 0, unloaded: 0 });
    expect(seen.most).toBe(0);
  });
});
