import { Kafka, logLevel } from 'kafkajs';
import type { Page } from 'playwright-core';
import { openConsolePage } from './testing/console-browser.js';
import { SHOWCASE, seedShowcase, type Showcase } from './testing/console-data.js';
import { startConsoleUnderTest, type ConsoleUnderTest } from './testing/console-under-test.js';
import { consumeMessages } from './testing/kafka-clients.js';

// Every page of the web console in Debian's chromium against a standalone in
// this process, serving the built front-end on a free console port, with the
// showcase data (console-data.ts). One standalone and one browser for the file.

const hash = (path: string): string => `#${path}`;
const topicHash = (topic: string, rest = ''): string => hash(`/topics/${encodeURIComponent(topic)}${rest}`);

async function textOf(page: Page, selector: string): Promise<string> {
  return (await page.locator(selector).first().textContent()) ?? '';
}

describe('the web console in a browser against standalone', () => {
  let under: ConsoleUnderTest;
  let showcase: Showcase;

  beforeAll(async () => {
    under = await startConsoleUnderTest(['--group-initial-rebalance-delay-ms', '0']);
    showcase = await seedShowcase(under.serviceUrl);
  }, 120_000);
  afterAll(() => under?.close());

  it('overview: the owners with their load, the services, storage, and a live rate chart', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, hash('/'), '[data-testid=owners] tbody tr');
    expect(await page.locator('[data-testid=owners] tbody tr').count()).toBeGreaterThanOrEqual(2);
    expect(await textOf(page, '[data-testid=owners]')).toContain('writer');
    expect(await textOf(page, '[data-testid=services]')).toContain('serving');
    // The showcase's topics are loaded: once a writer owner's keep-alive reports them, storage is above 0.
    await page
      .locator('[data-testid=overview-facts]', { hasText: /storage used[1-9][\d.]* (B|KiB|MiB) in loaded topics/ })
      .waitFor();
    // The chart gains a sample each time the page asks again: one more than it had when first seen means it is
    // live. (Waiting for exactly 2 failed whenever the storage figure took more than one refresh to show: by then the
    // chart held 3.)
    const chart = page.locator('[data-testid=rate-chart]');
    await chart.waitFor();
    const seen = Number(await chart.getAttribute('data-samples'));
    expect(seen).toBeGreaterThanOrEqual(1);
    await page.waitForFunction(
      `Number(document.querySelector('[data-testid=rate-chart]')?.getAttribute('data-samples')) > ${seen}`,
    );
    expect(await page.locator('[data-testid=rate-chart] canvas').count()).toBeGreaterThan(0);
  });

  it('tenants and namespaces with their policies, and a namespace with its topics', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, hash('/tenants'), '[data-testid=tenant-acme]');
    const tenant = await textOf(page, '[data-testid=tenant-acme]');
    expect(tenant).toContain(SHOWCASE.namespace);
    expect(tenant).toContain('admins: orders-team');
    expect(tenant).toMatch(/created \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z/);
    expect(tenant).toContain('8 buckets');
    expect(tenant).toContain('retention 1440 min');
    await page.getByRole('link', { name: SHOWCASE.namespace }).click();
    await page.locator('[data-testid=topic-row]').first().waitFor();
    const names = await page.locator('[data-testid=topic-row] a').allTextContents();
    expect(names).toContain('payments');
    // The partitioned topic is one row with its count, not a row per partition.
    expect(names.filter((name) => name.startsWith('events'))).toEqual(['events']);
    const events = page.locator('[data-testid=topic-row]', { hasText: 'events' });
    expect(await events.locator('[data-testid=topic-row-kind]').textContent()).toBe('3 partitions');
  });

  it('a topic: offsets, ledgers with sizes, producers and subscriptions with backlog', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, topicHash(SHOWCASE.topic), '[data-testid=partition-facts]');
    const facts = await textOf(page, '[data-testid=partition-facts]');
    expect(facts).toContain('earliest offset0');
    expect(facts).toContain(`latest offset${SHOWCASE.before + SHOWCASE.after}`);
    expect(await page.locator('[data-testid=ledgers] tbody tr').count()).toBeGreaterThanOrEqual(1);
    expect(await textOf(page, '[data-testid=ledgers]')).toMatch(/\d+(\.\d)? (B|KiB)/);
    const subscription = page.locator('[data-testid=subscriptions] tbody tr', { hasText: SHOWCASE.subscription });
    expect(await subscription.textContent()).toContain('Shared');
    expect(await textOf(page, '[data-testid=topic-page]')).toContain('No read-only owner serves this topic.');
  });

  it('a partitioned topic: its partitions with owner, offsets and backlog, each linked to its own page', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, topicHash(SHOWCASE.partitioned), '[data-testid=partitions]');
    expect(await textOf(page, '[data-testid=topic-kind]')).toContain('3 partitions');
    const rows = page.locator('[data-testid=partitions] tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await textOf(page, '[data-testid=partitions] thead')).toContain('backlog');
    await rows.nth(1).getByRole('link', { name: '1' }).click();
    await page.locator('[data-testid=partition-facts]').waitFor();
    expect(await textOf(page, '[data-testid=topic-kind]')).toContain(`partition 1 of ${SHOWCASE.partitioned}`);
    expect(await textOf(page, '[data-testid=partition-facts]')).toMatch(/latest offset\d/);
  });

  it('a subscription: its cursor, the ack-hole map and redeliveries', async () => {
    const { page } = under.browser;
    await openConsolePage(
      page,
      under.consoleUrl,
      topicHash(SHOWCASE.topic, `/subscriptions/${SHOWCASE.subscription}`),
      '[data-testid=ack-map]',
    );
    const facts = await textOf(page, '[data-testid=cursor-facts]');
    expect(facts).toContain('typeShared');
    expect(facts).toMatch(/acknowledged ranges[1-9]/);
    expect(Number(await page.locator('[data-testid=ack-map]').getAttribute('data-cells'))).toBeGreaterThan(0);
    expect(await page.locator('[data-testid=ack-ranges] tbody tr').count()).toBeGreaterThan(0);
  });

  it('the message browser from an offset: key, properties, payload as JSON, text and hex, and where it is', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, topicHash(SHOWCASE.topic, '/messages'), '[data-testid=message]');
    await page.locator('[data-testid=browse-form] input[name=offset]').fill('3');
    await page.locator('[data-testid=browse-form] button[type=submit]').click();
    await page.locator('[data-testid=browse-range]', { hasText: 'showing from 3.' }).waitFor();
    const first = page.locator('[data-testid=message]').first();
    expect(await first.getAttribute('data-offset')).toBe('3');
    expect(await first.locator('[data-testid=message-key]').textContent()).toBe(showcase.sampleKey);
    const shown = (await first.textContent()) ?? '';
    expect(shown).toContain('source=web');
    expect(shown).toMatch(/entry \d+:3/);
    expect(await first.locator('[data-testid=payload]').textContent()).toContain('"order": 3');
    await first.getByRole('button', { name: 'hex' }).click();
    expect(await first.locator('[data-testid=payload]').textContent()).toContain('7b 22 6f 72'); // {"or
    await first.getByRole('button', { name: 'text' }).click();
    expect(await first.locator('[data-testid=payload]').textContent()).toContain('{"order":3,');
  });

  it('the message browser from a time starts at the first message stored at or after it', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, topicHash(SHOWCASE.topic, '/messages'), '[data-testid=message]');
    await page.locator('[data-testid=browse-form] select[name=mode]').selectOption('time');
    await page
      .locator('[data-testid=browse-form] input[name=time]')
      .fill(new Date(showcase.boundaryMs).toISOString().slice(0, 23));
    await page.locator('[data-testid=browse-form] button[type=submit]').click();
    await page.locator('[data-testid=browse-range]', { hasText: `showing from ${SHOWCASE.before}.` }).waitFor();
    expect(await page.locator('[data-testid=message]').first().getAttribute('data-offset')).toBe(
      String(SHOWCASE.before),
    );
  });

  it('produces a message and reads it back', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, topicHash(SHOWCASE.topic, '/messages'), '[data-testid=produce-form]');
    const form = page.locator('[data-testid=produce-form]');
    await form.locator('input[name=key]').fill('typed-key');
    await form.locator('textarea[name=properties]').fill('origin=console');
    await form.locator('textarea[name=payload]').fill('{"hello":"console"}');
    await form.getByRole('button', { name: 'Produce' }).click();
    const offset = SHOWCASE.before + SHOWCASE.after;
    expect(await page.locator('[data-testid=produce-outcome]').textContent()).toContain(`offset ${offset}`);
    await page.locator('[data-testid=browse-form] input[name=offset]').fill(String(offset));
    await page.locator('[data-testid=browse-form] button[type=submit]').click();
    const produced = page.locator(`[data-testid=message][data-offset="${offset}"]`);
    await produced.waitFor();
    expect(await produced.locator('[data-testid=message-key]').textContent()).toBe('typed-key');
    expect(await produced.textContent()).toContain('origin=console');
    expect(await produced.locator('[data-testid=payload]').textContent()).toContain('"hello": "console"');
  });

  it('the collector: pending deletions, passes, orphan sweeps and the reclaim delay', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, hash('/collector'), '[data-testid=collector-facts]');
    const facts = await textOf(page, '[data-testid=collector-facts]');
    expect(facts).toContain('pending deletions');
    expect(facts).toContain('orphan sweeps');
    expect(facts).toContain('reclaim delay');
  });

  it('Kafka: a consumer group with its members, their assignments and the lag of each partition', async () => {
    const kafka = new Kafka({
      clientId: 'console-spec',
      brokers: [`127.0.0.1:${under.standalone.kafka!.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 50 },
    });
    const admin = kafka.admin();
    const producer = kafka.producer();
    const consumer = kafka.consumer({ groupId: 'console-readers', sessionTimeout: 10_000 });
    try {
      await Promise.all([admin.connect(), producer.connect(), consumer.connect()]);
      await admin.createTopics({ topics: [{ topic: 'clicks', numPartitions: 2 }] });
      const click = (n: number) => ({ key: `k${n}`, value: `click ${n}`, partition: n % 2 });
      await producer.send({ topic: 'clicks', messages: [0, 1, 2, 3].map(click) });
      await consumer.subscribe({ topic: 'clicks', fromBeginning: true });
      await consumeMessages(consumer, 4, { autoCommit: false });
      // Both partitions read to offset 2, then three more clicks: lags 2 and 1.
      await consumer.commitOffsets([0, 1].map((partition) => ({ topic: 'clicks', partition, offset: '2' })));
      await producer.send({ topic: 'clicks', messages: [4, 5, 6].map(click) });
      const { page } = under.browser;
      await openConsolePage(
        page,
        under.consoleUrl,
        hash('/kafka'),
        '[data-testid=kafka-group][data-group=console-readers]',
      );
      const group = page.locator('[data-testid=kafka-group][data-group=console-readers]');
      expect(await group.textContent()).toContain('console-spec');
      expect(await group.textContent()).toMatch(/clicks-[01]/);
      // The committed offsets of the partitions the group's member is assigned, against their log ends.
      const lagRows = group.locator('[data-testid=kafka-lag] tbody tr');
      await lagRows.nth(1).waitFor();
      expect(await lagRows.count()).toBe(2);
      expect(await lagRows.nth(0).textContent()).toBe('clicks0242');
      expect(await lagRows.nth(1).textContent()).toBe('clicks1231');
      expect(await group.textContent()).toContain('total lag 3');
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
