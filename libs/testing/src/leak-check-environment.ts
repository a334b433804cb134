// Loaded by Jest outside its module mapper: imports carry no .js suffix.
import { relative } from 'node:path';
import { TestEnvironment } from 'jest-environment-node';
import { LEAK_SETTLE_MS, LeakTracker, formatLeaks, type PortLabels } from './leak-tracker';
import { NATS_URL_ENV, REDIS_URL_ENV } from './shared-servers';

/*
 * Jest's node environment plus a leak check: after a test file's last
 * afterAll, whatever the file started and left running (timers, sockets,
 * servers, child processes) fails the file with a list of what and where.
 * The check runs on circus's run_finish event rather than in an afterAll of a
 * setup file because setup-file hooks run before the test file's own
 * afterAll, which is where files close what they opened.
 *
 * LEDGERLINE_LEAK_CHECK=warn reports leaks on stderr without failing; =off
 * turns the check off (for example while running a single file under
 * --detectOpenHandles).
 */

export const LEAK_CHECK_ENV = 'LEDGERLINE_LEAK_CHECK';

type Mode = 'fail' | 'warn' | 'off';

/** The parts of circus's event and state that the check uses. */
interface CircusEvent {
  name: string;
}
interface CircusState {
  unhandledErrors: unknown[];
}

export default class LeakCheckEnvironment extends TestEnvironment {
  private readonly mode: Mode;
  private readonly testPath: string;
  private readonly tracker: LeakTracker | undefined;

  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    const [config, context] = args;
    this.testPath = relative(config.globalConfig.rootDir, context.testPath);
    const mode = process.env[LEAK_CHECK_ENV] ?? 'fail';
    if (mode !== 'fail' && mode !== 'warn' && mode !== 'off') {
      throw new Error(`${LEAK_CHECK_ENV} must be fail, warn or off, not '${mode}'`);
    }
    this.mode = mode;
    if (mode !== 'off') {
      this.tracker = new LeakTracker(this.global as unknown as typeof globalThis, sharedServerPorts());
    }
  }

  override async setup(): Promise<void> {
    await super.setup();
    this.tracker?.start();
  }

  async handleTestEvent(event: CircusEvent, state: CircusState): Promise<void> {
    if (event.name !== 'run_finish' || this.tracker === undefined) return;
    const leaks = await this.tracker.settle();
    if (leaks.length === 0) return;
    const report = formatLeaks(this.testPath, leaks, LEAK_SETTLE_MS);
    // Stop what was left, so it neither keeps the worker alive nor shows up in the next file.
    for (const leak of leaks) {
      try {
        leak.close();
      } catch {
        // Best effort: the report already names it.
      }
    }
    if (this.mode === 'warn') process.stderr.write(`\n${report}\n`);
    else {
      const error = new Error(report);
      // The report is the whole story; this environment's own frames would only hide it.
      error.stack = `Error: ${report}`;
      state.unhandledErrors.push(error);
    }
  }
}

function sharedServerPorts(): PortLabels {
  const labels = new Map<number, string>();
  for (const [env, label] of [
    [REDIS_URL_ENV, 'the shared redis-server'],
    [NATS_URL_ENV, 'the shared nats-server'],
  ] as const) {
    const port = Number(process.env[env]?.split(':').pop());
    if (Number.isInteger(port)) labels.set(port, label);
  }
  return labels;
}
