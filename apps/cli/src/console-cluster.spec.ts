import { LocalCluster } from '@ledgerline/cluster';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { launchConsoleBrowser, openConsolePage, type ConsoleBrowser } from './testing/console-browser.js';
import { SHOWCASE, seedShowcase } from './testing/console-data.js';
import { ensureConsoleWebBuilt } from './testing/console-web-build.js';
import { consumeMessages } from './testing/kafka-clients.js';

// Every page of the web console in chromium against the cluster `ledgerline
// cluster up` starts: each service its own process over Redis and NATS, the
// console calling them over the network as it does in pods. The page specs
// against standalone (console-pages.spec.ts) check what each page says; this
// one that each page gets its data from a cluster's services.

const topicHash = (topic: string, rest = ''): string => `#/topics/${encodeURIComponent(topic)}${rest}`;

/** [page, address, what shows its data]. */
const PAGES: [string, string, string][] = [
  ['overview', '#/', '[data-testid=owners] tbody tr'],
  ['tenants', '#/tenants', `[data-testid=tenant-${SHOWCASE.tenant}]`],
  ['namespace', `#/namespaces/${encodeURIComponent(SHOWCASE.namespace)}`, '[data-testid=topic-row]'],
  ['topic', topicHash(SHOWCASE.topic), '[data-testid=partition-facts]'],
  ['partitioned topic', topicHash(SHOWCASE.partitioned), '[data-testid=partition-facts]'],
  ['subscription', topicHash(SHOWCASE.topic, `/subscriptions/${SHOWCASE.subscription}`), '[data-testid=ack-map]'],
  ['messages', topicHash(SHOWCASE.topic, '/messages'), '[data-testid=message]'],
  ['collector', '#/collector', '[data-testid=collector-facts]'],
  ['kafka', '#/kafka', '[data-testid=kafka-group][data-group=cluster-readers]'],
];

describe('the web console in a browser against a cluster of processes', () => {
  let cluster: LocalCluster;
  let browser: ConsoleBrowser;
  let consoleUrl: string;
  let member: Consumer | undefined;

  beforeAll(async () => {
    await ensureConsoleWebBuilt();
    cluster = await LocalCluster.start({
      counts: {
        metadata: 1,
        'writer-owner': 2,
        'readonly-owner': 1,
        'garbage-collector': 1,
        'kafka-gateway': 1,
        console: 1,
      },
    });
    consoleUrl = cluster.byRole('console')[0]!.consoleUrl!.replace(/\/$/, '');
    await seedShowcase(cluster.byRole('metadata')[0]!.address);
    member = await kafkaGroup(cluster.byRole('kafka-gateway')[0]!.kafkaAddress!);
    browser = await launchConsoleBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await member?.disconnect();
    await cluster?.stop();
  }, 120_000);

  it.each(PAGES)('%s', async (_name, hash, ready) => {
    await openConsolePage(browser.page, consoleUrl, hash, ready);
    // A page that could not reach a service shows the refusal instead of its data.
    expect(await browser.page.locator('[data-testid=call-error]').count()).toBe(0);
  });

  it('lists the cluster’s services, the read-only owner and the gateway among them', async () => {
    await openConsolePage(browser.page, consoleUrl, '#/', '[data-testid=services]');
    const services = (await browser.page.locator('[data-testid=services]').textContent()) ?? '';
    for (const service of ['metadata', 'writer-owner', 'readonly-owner', 'kafka-gateway', 'garbage-collector'])
      expect(services).toContain(service);
  });
});

/** A Kafka consumer group with a member, for the Kafka page: two messages read and committed; the member stays. */
async function kafkaGroup(bootstrap: string): Promise<Consumer> {
  const kafka = new Kafka({
    clientId: 'console-cluster',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: 'cluster-readers', sessionTimeout: 10_000 });
  try {
    await Promise.all([producer.connect(), consumer.connect()]);
    await producer.send({ topic: 'cluster-clicks', messages: [{ value: 'a' }, { value: 'b' }] });
    await consumer.subscribe({ topic: 'cluster-clicks', fromBeginning: true });
    await consumeMessages(consumer, 2);
    return consumer;
  } catch (error) {
    await consumer.disconnect();
    throw error;
  } finally {
    await producer.disconnect();
  }
}
