import { LocalCluster } from '@ledgerline/cluster';
import { eventually } from '@ledgerline/testing';
import { TopicsLoad, takeoverSettings } from '../index.js';

/*
 * A writer owner SIGKILLed in the middle of draining many busy topics: some
 * of its topics were moved, some are between the lease hand-over and the
 * target's load (the target holds the hand-over state the dead owner sent),
 * some were still its own. Each ends up served by one live owner: a moved
 * topic where it went, a handed-over one by the target that took it up or by
 * whoever loads it once the dead owner's lease lapses, the rest after that
 * lapse. Nothing acknowledged is lost, nothing is stored twice, each topic's
 * next offset is what was acknowledged, and no send fails (the producers
 * resend what the dead owner never answered).
 */

const TOPICS = 24;
const RATE_PER_TOPIC = 20;
const LEASE_TTL_MS = 2_000;
const ACKS_PER_TOPIC_BEFORE = 10;
const ACKS_PER_TOPIC_AFTER = 10;
/** Bounds each wait for progress at 60 s. */
const PROGRESS = { attempts: 600, intervalMs: 100 };

describe('a writer owner killed in the middle of a drain', () => {
  let cluster: LocalCluster;
  let load: TopicsLoad | undefined;

  beforeAll(async () => {
    const settings = takeoverSettings(LEASE_TTL_MS);
    cluster = await LocalCluster.start({
      counts: { metadata: 1, 'writer-owner': 1 },
      // The draining owner logs each topic it moved, which is what the kill waits for.
      logLevel: 'info',
      settings: {
        ...settings,
        // Only the drain moves topics.
        metadata: { ...settings.metadata, LEDGERLINE_BALANCER_ENABLED: 'false' },
      },
    });
  }, 180_000);
  afterAll(async () => {
    await load?.close().catch(() => undefined);
    await cluster?.stop();
  }, 120_000);

  it('loses nothing, stores nothing twice, fails no send, and every topic is served again', async () => {
    const victim = cluster.byRole('writer-owner')[0]!;
    load = await TopicsLoad.start(cluster, 'drainkill', TOPICS, RATE_PER_TOPIC);
    const started = load;
    await eventually(() => started.everyTopicAcked(ACKS_PER_TOPIC_BEFORE), {
      ...PROGRESS,
      description: 'every topic acknowledged before the drain',
    });
    await cluster.add('writer-owner');
    await cluster.add('writer-owner');

    victim.signal('SIGTERM');
    // The first topic moved: the drain has others in flight (8 at once) and most still to go.
    await victim.waitForOutput(/"msg":"topic transferred"/, 30_000);
    victim.signal('SIGKILL');
    expect(await victim.exited).toMatchObject({ signal: 'SIGKILL' });
    const movedBeforeKill = victim.output.split('"msg":"topic transferred"').length - 1;
    expect(movedBeforeKill).toBeLessThan(TOPICS);

    const acksAtKill = new Map(started.topics.map((topic) => [topic, started.acksOf(topic).length]));
    const behind = () =>
      started.topics.filter((topic) => started.acksOf(topic).length < acksAtKill.get(topic)! + ACKS_PER_TOPIC_AFTER);
    await eventually(() => behind().length === 0, {
      ...PROGRESS,
      description: 'every topic acknowledged again after the kill',
    });
    await started.stop();
    expect(started.failures).toEqual([]);
    expect(await started.check()).toEqual([]);
    for (const topic of started.topics) expect((await cluster.ownerOf(topic)).running).toBe(true);
    console.log(`killed mid-drain after ${movedBeforeKill} of ${TOPICS} topics moved; ${started.acks.length} acked`);
  }, 240_000);
});
