import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

// Debian's chromium driven by playwright-core (which ships no browser of its
// own): what the web console's browser specs and its screenshot script run.

/** Where Debian's chromium package puts the browser (.ci/run installs it when missing). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Bounds every wait of a console spec on the page: past it the wait fails and says on what. */
export const PAGE_WAIT_MS = 20_000;

/** No sandbox (root in a container), no GPU, and nothing that reaches the network on its own. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ConsoleBrowser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Closes the browser (its processes end with it) and removes its profile. */
  close(): Promise<void>;
}

/** A headless chromium with a fresh profile, its clock zone UTC, one page open. */
export async function launchConsoleBrowser(viewport = { width: 1360, height: 900 }): Promise<ConsoleBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install -y chromium (.ci/run installs it)`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'ledgerline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport,
    timezoneId: 'UTC',
    locale: 'en-US',
  });
  context.setDefaultTimeout(PAGE_WAIT_MS);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens a console page at `hash` (e.g. `#/tenants`) as a fresh load, as a
 * bookmark would, and waits for `ready`, the selector that shows its data
 * came; returns how long that took (ms). The blank page first makes a load of
 * the address already shown a load, not a same-document hash change.
 */
export async function openConsolePage(page: Page, consoleUrl: string, hash: string, ready: string): Promise<number> {
  await page.goto('about:blank');
  const started = performance.now();
  await page.goto(`${consoleUrl}/${hash}`);
  await page.locator(ready).first().waitFor({ state: 'visible' });
  return performance.now() - started;
}
