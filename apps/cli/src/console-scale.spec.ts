import { openConsolePage } from './testing/console-browser.js';
import { createManyTopics, subscriptionOfManyHoles } from './testing/console-data.js';
import { startConsoleUnderTest, type ConsoleUnderTest } from './testing/console-under-test.js';

// The web console at the sizes Ledgerline is built for: a namespace of
// 100,000 topics paged by the server and scrolled virtually, searched by
// prefix, and a subscription with 100,000 ack holes drawn as a bounded map.

const TOPICS = 100_000;
const HOLES = 100_000;
const MANY = 'public/many';
const HOLEY = 'persistent://public/default/holey';

describe('the web console at scale', () => {
  let under: ConsoleUnderTest;

  beforeAll(async () => {
    under = await startConsoleUnderTest();
    const { serviceUrl } = under;
    await createManyTopics(serviceUrl, MANY, TOPICS, 16);
    await subscriptionOfManyHoles(serviceUrl, HOLEY, 'slow-shared', HOLES);
  }, 300_000);
  afterAll(() => under?.close());

  it('pages a namespace of 100,000 topics as the list scrolls, and searches it by prefix', async () => {
    const { page } = under.browser;
    await openConsolePage(
      page,
      under.consoleUrl,
      `#/namespaces/${encodeURIComponent(MANY)}`,
      '[data-testid=topic-row]',
    );
    expect(await page.locator('[data-testid=topic-count]').textContent()).toContain('of 100,000 in the namespace');
    const list = page.locator('[data-testid=topic-list]');
    const firstPage = Number(await list.getAttribute('data-rows'));
    expect(firstPage).toBeGreaterThan(0);
    expect(firstPage).toBeLessThan(TOPICS);
    // Only the rows in view are in the page, whatever was loaded.
    expect(await page.locator('[data-testid=topic-row]').count()).toBeLessThan(100);
    await list.evaluate((element) => element.scrollTo(0, element.scrollHeight));
    // Scrolled to the end of what is loaded, the list asks the server for the next page.
    await page.waitForFunction(
      `Number(document.querySelector('[data-testid=topic-list]').getAttribute('data-rows')) > ${firstPage}`,
    );
    expect(await page.locator('[data-testid=topic-row] a').first().textContent()).toMatch(/^t0\d{5}$/);

    await page.locator('[data-testid=topic-prefix]').fill('t0999');
    await page.locator('[data-testid=topic-list][data-rows="100"]').waitFor();
    const names = await page.locator('[data-testid=topic-row] a').allTextContents();
    expect(names).toContain('t099900');
    expect(names.every((name) => name.startsWith('t0999'))).toBe(true);
    expect(await page.locator('[data-testid=topic-count]').textContent()).toMatch(/^100 shown of 100,000/);
  });

  it('draws a subscription with 100,000 holes as a bounded map, and pages its exact ranges from a cell', async () => {
    const { page } = under.browser;
    const subscriptionHash = `#/topics/${encodeURIComponent(HOLEY)}/subscriptions/slow-shared`;
    await openConsolePage(page, under.consoleUrl, subscriptionHash, '[data-testid=ack-map]');
    expect(await page.locator('[data-testid=cursor-facts]').textContent()).toContain('acknowledged ranges100,000');
    const cells = Number(await page.locator('[data-testid=ack-map]').getAttribute('data-cells'));
    expect(cells).toBeGreaterThan(100);
    expect(cells).toBeLessThanOrEqual(4096);
    expect(await page.locator('[data-testid=ack-map] figcaption').textContent()).toContain(
      '100,000 acknowledged ranges',
    );
    expect(await page.locator('[data-testid=ack-ranges] tbody tr').count()).toBe(100);
    // A cell in the middle: the ranges from there on replace the first page.
    const firstRange = await page.locator('[data-testid=ack-ranges] tbody tr td').first().textContent();
    await page
      .locator('.ack-cell')
      .nth(Math.floor(cells / 2))
      .click();
    await page.waitForFunction(
      `document.querySelector('[data-testid=ack-ranges] tbody tr td')?.textContent !== ${JSON.stringify(firstRange)}`,
    );
    expect(await page.locator('[data-testid=ack-ranges] tbody tr td').first().textContent()).not.toBe(firstRange);
  });
});
