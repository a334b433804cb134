// Takes docs/console/*.png, one screenshot per page of the web console, from
// a standalone in this process with the showcase data the browser specs use
// (apps/cli/src/testing/console-data.ts) and a Kafka consumer group, and
// prints how long each page took to show its data (with the load average:
// on a shared machine the figures are indicative only).
//
// Run: npx tsx scripts/console-screenshots.ts [--topics N] [--holes N]
//   Defaults: 100,000 topics in public/many, 100,000 holes in public/default/holey.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { launchConsoleBrowser, openConsolePage } from '../apps/cli/src/testing/console-browser.js';
import {
  SHOWCASE,
  createManyTopics,
  seedShowcase,
  subscriptionOfManyHoles,
} from '../apps/cli/src/testing/console-data.js';
import { ensureConsoleWebBuilt } from '../apps/cli/src/testing/console-web-build.js';
import { startTestStandalone } from '../apps/cli/src/testing/test-standalone.js';

const OUT = resolve(__dirname, '../docs/console');

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

const topic = (name: string, rest = '') => `#/topics/${encodeURIComponent(name)}${rest}`;
const HOLEY = 'persistent://public/default/holey';

/** [file, address, the selector that shows the page's data]. */
const PAGES: [string, string, string][] = [
  ['overview', '#/', '[data-testid=owners] tbody tr'],
  ['tenants', '#/tenants', '[data-testid=tenant-acme]'],
  ['namespace', `#/namespaces/${encodeURIComponent('public/many')}`, '[data-testid=topic-row]'],
  ['topic', topic(SHOWCASE.topic), '[data-testid=partition-facts]'],
  ['subscription', topic(HOLEY, '/subscriptions/slow-shared'), '[data-testid=ack-map]'],
  ['messages', topic(SHOWCASE.topic, '/messages'), '[data-testid=message]'],
  ['collector', '#/collector', '[data-testid=collector-facts]'],
  ['kafka', '#/kafka', '[data-testid=kafka-group]'],
];

async function kafkaGroup(port: number) {
  const kafka = new Kafka({ clientId: 'clickstream', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  const consumer = kafka.consumer({ groupId: 'clickstream-readers' });
  await producer.connect();
  await consumer.connect();
  await producer.send({
    topic: 'clicks',
    messages: Array.from({ length: 40 }, (_, n) => ({ key: `user-${n % 7}`, value: `click ${n}` })),
  });
  await consumer.subscribe({ topic: 'clicks', fromBeginning: true });
  let seen = 0;
  await new Promise<void>((done) => {
    void consumer.run({ eachMessage: async () => void (++seen === 40 && done()) });
  });
  await producer.send({ topic: 'clicks', messages: [{ value: 'late click' }, { value: 'later click' }] });
  return async () => {
    await consumer.disconnect();
    await producer.disconnect();
  };
}

async function main(): Promise<void> {
  await ensureConsoleWebBuilt();
  mkdirSync(OUT, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-screenshots-'));
  const standalone = await startTestStandalone(join(dir, 'data'), 'silent', [
    '--group-initial-rebalance-delay-ms',
    '0',
  ]);
  const serviceUrl = `127.0.0.1:${standalone.grpcPort}`;
  const browser = await launchConsoleBrowser({ width: 1360, height: 1000 });
  let stopKafka = async (): Promise<void> => undefined;
  try {
    await seedShowcase(serviceUrl);
    await createManyTopics(serviceUrl, 'public/many', option('--topics', 100_000), 16);
    await subscriptionOfManyHoles(serviceUrl, HOLEY, 'slow-shared', option('--holes', 100_000));
    stopKafka = await kafkaGroup(standalone.kafka!.port);
    const consoleUrl = `http://127.0.0.1:${standalone.console!.port}`;
    // What the subscription page draws: the ranges (holes, give or take one) its map counts.
    const summary = (await fetch(`${consoleUrl}/ledgerline.v1.ConsoleService/GetSubscriptionSummary`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ topic: HOLEY, subscription: 'slow-shared' }),
    }).then((answer) => answer.json())) as { ackMap?: { ackedRanges?: string } };
    console.log(`${HOLEY} slow-shared: ${summary.ackMap?.ackedRanges ?? 0} acknowledged ranges`);
    console.log(
      `load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
    );
    for (const [file, hash, ready] of PAGES) {
      const shownMs = await openConsolePage(browser.page, consoleUrl, hash, ready);
      // The live chart draws a line once it holds a few samples.
      if (file === 'overview') await browser.page.locator('[data-testid=rate-chart][data-samples="5"]').waitFor();
      await browser.page.screenshot({ path: join(OUT, `${file}.png`), fullPage: false });
      console.log(`${file.padEnd(14)} ${shownMs.toFixed(0).padStart(6)} ms to show its data`);
    }
  } finally {
    await stopKafka();
    await browser.close();
    await standalone.shutdown('screenshots taken');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
