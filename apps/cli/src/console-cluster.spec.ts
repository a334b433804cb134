import { LocalCluster } from '@ledgerline/cluster';
import { coordinatorAmong } from '@ledgerline/kafka-gateway';
import { eventually } from '@ledgerline/testing';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { launchConsoleBrowser, openConsolePage, type ConsoleBrowser } from './testing/console-browser.js';
import { SHOWCASE, seedShowcase } from './testing/console-data.js';
import { ensureConsoleWebBuilt } from './testing/console-web-build.js';
import { consumeMessages } from './testing/kafka-clients.js';

// Every page of the web console in chromium against the cluster `ledgerline
// cluster up` starts: each service its own process over Redis and NATS, the
// console calling them over the network as it does in pods. The page specs
// against standalone (console-pages.spec.ts) check what each page says; this
// one that each page gets its data from a cluster's services, and that the
// Kafka page lists the groups of every gateway, not only the one it asks.

const topicHash = (topic: string, rest = ''): string => `#/topics/${encodeURIComponent(topic)}${rest}`;

/** [page, address, what shows its data]. */
const PAGES: [string, string, string][] = [
  ['overview', '#/', '[data-testid=owners] tbody tr'],
  ['tenants', '#/tenants', `[data-testid=tenant-${SHOWCASE.tenant}]`],
  ['namespace', `#/namespaces/${encodeURIComponent(SHOWCASE.namespace)}`, '[data-testid=topic-row]'],
  ['topic', topicHash(SHOWCASE.topic), '[data-testid=partition-facts]'],
  ['partitioned topic', topicHash(SHOWCASE.partitioned), '[data-testid=partitions] tbody tr'],
  ['subscription', topicHash(SHOWCASE.topic, `/subscriptions/${SHOWCASE.subscription}`), '[data-testid=ack-map]'],
  ['messages', topicHash(SHOWCASE.topic, '/messages'), '[data-testid=message]'],
  ['collector', '#/collector', '[data-testid=collector-facts]'],
  ['kafka', '#/kafka', '[data-testid=kafka-group]'],
];

describe('the web console in a browser against a cluster of processes', () => {
  let cluster: LocalCluster;
  let browser: ConsoleBrowser;
  let consoleUrl: string;
  const members: Consumer[] = [];
  let groups: string[] = [];

  beforeAll(async () => {
    await ensureConsoleWebBuilt();
    cluster = await LocalCluster.start({
      counts: {
        metadata: 1,
        'writer-owner': 2,
        'readonly-owner': 1,
        'garbage-collector': 1,
        'kafka-gateway': 2,
        console: 1,
      },
    });
    consoleUrl = cluster.byRole('console')[0]!.consoleUrl!.replace(/\/$/, '');
    await seedShowcase(cluster.byRole('metadata')[0]!.address);
    const bootstrap = cluster.byRole('kafka-gateway')[0]!.kafkaAddress!;
    groups = await groupsOnEveryGateway(bootstrap);
    for (const group of groups) members.push(await kafkaGroup(bootstrap, group));
    browser = await launchConsoleBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    for (const member of members) await member.disconnect();
    await cluster?.stop();
  }, 120_000);

  it.each(PAGES)('%s', async (_name, hash, ready) => {
    await openConsolePage(browser.page, consoleUrl, hash, ready);
    // A page that could not reach a service shows the refusal instead of its data.
    expect(await browser.page.locator('[data-testid=call-error]').count()).toBe(0);
  });

  it('lists the consumer groups of every gateway on the Kafka page', async () => {
    await openConsolePage(browser.page, consoleUrl, '#/kafka', '[data-testid=kafka-group]');
    for (const group of groups) {
      await browser.page.locator(`[data-testid=kafka-group][data-group=${group}]`).waitFor();
    }
  });

  it('lists the cluster’s services, the read-only owner and the gateway among them', async () => {
    await openConsolePage(browser.page, consoleUrl, '#/', '[data-testid=services]');
    const services = (await browser.page.locator('[data-testid=services]').textContent()) ?? '';
    for (const service of ['metadata', 'writer-owner', 'readonly-owner', 'kafka-gateway', 'garbage-collector'])
      expect(services).toContain(service);
  });
});

function kafkaAt(bootstrap: string, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
}

/**
 * Two group ids whose coordinators are the two gateways, as the gateways pick
 * coordinators (rendezvous hashing over the brokers Metadata lists), once each
 * gateway has seen the other.
 */
async function groupsOnEveryGateway(bootstrap: string): Promise<string[]> {
  const admin = kafkaAt(bootstrap, 'console-cluster-admin').admin();
  await admin.connect();
  try {
    let brokers: { nodeId: number; host: string; port: number }[] = [];
    await eventually(async () => {
      brokers = (await admin.describeCluster()).brokers;
      return brokers.length === 2;
    });
    const byCoordinator = new Map<number, string>();
    for (let n = 0; byCoordinator.size < 2 && n < 64; n++) {
      const group = `cluster-readers-${n}`;
      const coordinator = coordinatorAmong(brokers, group)!;
      if (!byCoordinator.has(coordinator.nodeId)) byCoordinator.set(coordinator.nodeId, group);
    }
    expect(byCoordinator.size).toBe(2);
    return [...byCoordinator.values()];
  } finally {
    await admin.disconnect();
  }
}

/** A Kafka consumer group with a member, for the Kafka page: two messages read and committed; the member stays. */
async function kafkaGroup(bootstrap: string, groupId: string): Promise<Consumer> {
  const kafka = kafkaAt(bootstrap, 'console-cluster');
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000 });
  try {
    await Promise.all([producer.connect(), consumer.connect()]);
    await producer.send({ topic: `${groupId}-clicks`, messages: [{ value: 'a' }, { value: 'b' }] });
    await consumer.subscribe({ topic: `${groupId}-clicks`, fromBeginning: true });
    await consumeMessages(consumer, 2);
    return consumer;
  } catch (error) {
    await consumer.disconnect();
    throw error;
  } finally {
    await producer.disconnect();
  }
}
