import { createClient } from '@ledgerline/client';
import { createToken } from '@ledgerline/security';
import { openConsolePage } from './testing/console-browser.js';
import { startConsoleUnderTest, type ConsoleUnderTest } from './testing/console-under-test.js';
import { tokenAuthArgv } from './testing/test-standalone.js';

// With token authentication on, the console asks for a token, keeps it in
// the tab and sends it with every call; the services' own checks decide what
// it shows (a role that may only produce reads no payloads).

const SECRET = 'console-spec-secret-that-is-long-enough';

describe('the web console with token authentication on', () => {
  let under: ConsoleUnderTest;

  beforeAll(async () => {
    under = await startConsoleUnderTest(tokenAuthArgv(SECRET));
    await under.standalone.admin.createTopic('public/default/audited', 0);
    await under.standalone.admin.grantPermission('public/default', 'feeder', ['produce']);
    const client = createClient({
      serviceUrl: under.serviceUrl,
      token: await createToken({ subject: 'ops', secret: SECRET }),
    });
    const producer = await client.producer({ topic: 'public/default/audited' });
    await producer.send('salary: 100000');
    await client.close();
  }, 120_000);
  afterAll(() => under?.close());

  it('asks for a token, keeps it in the tab and sends it with every call', async () => {
    const { page } = under.browser;
    await openConsolePage(page, under.consoleUrl, '#/tenants', '[data-testid=token-prompt]');
    expect(await page.locator('[data-testid=tenant-public]').count()).toBe(0);
    await page
      .locator('[data-testid=token-prompt] textarea')
      .fill(await createToken({ subject: 'ops', secret: SECRET }));
    await page.locator('[data-testid=token-prompt] button[type=submit]').click();
    await page.locator('[data-testid=tenant-public]').waitFor();
    expect(await page.locator('[data-testid=token-prompt]').count()).toBe(0);
    expect(await page.evaluate("sessionStorage.getItem('ledgerline.console.token')")).toMatch(/^eyJ/);
    // A reload keeps the token: the page answers without asking again.
    await page.reload();
    await page.locator('[data-testid=tenant-public]').waitFor();
    expect(await page.locator('[data-testid=who-am-i]').textContent()).toContain('role ops');
  });

  it('asks again for a token the services refuse, and shows no payload to a role that may not consume', async () => {
    const { page } = under.browser;
    await page.evaluate("sessionStorage.setItem('ledgerline.console.token', 'not-a-token')");
    await openConsolePage(page, under.consoleUrl, '#/tenants', '[data-testid=token-prompt]');
    await page
      .locator('[data-testid=token-prompt] textarea')
      .fill(await createToken({ subject: 'feeder', secret: SECRET }));
    await page.locator('[data-testid=token-prompt] button[type=submit]').click();
    await openConsolePage(
      page,
      under.consoleUrl,
      `#/topics/${encodeURIComponent('persistent://public/default/audited')}/messages`,
      '[data-testid=call-error]',
    );
    expect(await page.locator('[data-testid=call-error]').textContent()).toContain('PermissionDenied');
    expect(await page.locator('[data-testid=message]').count()).toBe(0);
    expect(await page.locator('body').textContent()).not.toContain('salary');
  });
});
