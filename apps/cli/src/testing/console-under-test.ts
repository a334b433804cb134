import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningStandalone } from '../standalone.js';
import { launchConsoleBrowser, type ConsoleBrowser } from './console-browser.js';
import { ensureConsoleWebBuilt } from './console-web-build.js';
import { startTestStandalone } from './test-standalone.js';

/** What a console browser spec runs against: a standalone serving the built front-end, and a browser. */
export interface ConsoleUnderTest {
  readonly standalone: RunningStandalone;
  readonly browser: ConsoleBrowser;
  /** The console's address on the free port the standalone bound. */
  readonly consoleUrl: string;
  /** The standalone's gRPC address, for the specs' own clients. */
  readonly serviceUrl: string;
  /** Closes the browser, stops the standalone and removes its data. */
  close(): Promise<void>;
}

/**
 * Builds the front-end if its sources are newer, starts a standalone in this
 * process (data in a fresh folder, `argv` added to its flags) and a headless
 * chromium: one of each per spec file.
 */
export async function startConsoleUnderTest(argv: readonly string[] = []): Promise<ConsoleUnderTest> {
  await ensureConsoleWebBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-console-'));
  const standalone = await startTestStandalone(join(dir, 'data'), 'silent', argv);
  const browser = await launchConsoleBrowser().catch(async (error: unknown) => {
    await standalone.shutdown('no browser');
    throw error;
  });
  return {
    standalone,
    browser,
    consoleUrl: `http://127.0.0.1:${standalone.console!.port}`,
    serviceUrl: `127.0.0.1:${standalone.grpcPort}`,
    async close() {
      await browser.close();
      await standalone.shutdown('test over');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
