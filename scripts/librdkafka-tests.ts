/**
 * Runs librdkafka's integration tests (its tests/ folder, built by
 * scripts/librdkafka-tests.sh) against one `ledgerline standalone` on free
 * ports: each test alone in its own test-runner process and process group,
 * with a timeout, printing pass/fail/time per test and the totals.
 *
 * Which tests: every test of the 0000-0999 range that needs a broker (the
 * suite's TEST_F_LOCAL tests exercise librdkafka alone, or its mock cluster,
 * and say nothing about the gateway), less those in EXCLUDED below, each with
 * its reason (the gateway's README lists them too). The suite runs in its own
 * quick mode (`-Q`, fewer messages) without its socket-emulation tests (`-E`),
 * the flags of librdkafka's `make quick`; those in AS_ON_KAFKA run in its full
 * mode against a second standalone with Kafka's group defaults.
 *
 *   npx tsx scripts/librdkafka-tests.ts --tests-dir <librdkafka>/tests [--quick] [--timeout-s N] [--logs-dir D] [test ...]
 *
 * Exit status 0 when every test run passed (or was skipped by the suite
 * itself, which says why), 1 otherwise.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from '@ledgerline/testing';
import { startStandalone, stopChild } from '../bench/baselines.js';
import {
  AS_ON_KAFKA,
  EXCLUDED,
  QUICK_SUBSET,
  selectTests,
  suiteTests,
  type SuiteTest,
} from './librdkafka-test-list.js';

/** The broker version the suite is told it talks to (it gates tests on it): what librdkafka's own Makefile runs against. */
const KAFKA_VERSION = '3.4.0';
/** The suite's own timeouts stretch by this much: the machine is shared, and this is not a speed test. */
const TIMEOUT_MULTIPLIER = 2;
const DEFAULT_TIMEOUT_S = 300;
/** Lines of a failed test's output printed with its verdict. */
const FAILURE_TAIL_LINES = 15;
/**
 * Topics the suite auto-creates get 4 partitions, as on the cluster its own
 * harness (trivup) starts: tests produce to partitions 1-3 of such a topic.
 */
const GATEWAY_ARGS = ['--read-only-grpc-port', '0', '--kafka-host', '127.0.0.1', '--kafka-default-partitions', '4'];
/** Groups form without the initial rebalance delay, except for the tests of AS_ON_KAFKA (Kafka's 3 s). */
const NO_INITIAL_DELAY = ['--group-initial-rebalance-delay-ms', '0'];

type Verdict = 'PASSED' | 'FAILED' | 'SKIPPED' | 'TIMEOUT';

interface Outcome {
  test: SuiteTest;
  verdict: Verdict;
  seconds: number;
  detail: string;
}

interface Options {
  testsDir: string;
  quick: boolean;
  timeoutSeconds: number;
  only: string[];
  /** Where each test number's whole output is written. */
  logsDir: string;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = {
    testsDir: '',
    quick: false,
    timeoutSeconds: DEFAULT_TIMEOUT_S,
    only: [],
    logsDir: join(tmpdir(), 'librdkafka-tests-logs'),
  };
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i] ?? '';
    if (argument === '--tests-dir') options.testsDir = argv[++i] ?? '';
    else if (argument === '--quick') options.quick = true;
    else if (argument === '--timeout-s') options.timeoutSeconds = Number(argv[++i]);
    else if (argument === '--logs-dir') options.logsDir = argv[++i] ?? '';
    else if (argument.startsWith('-')) throw new Error(`unknown option ${argument}`);
    else options.only.push(argument);
  }
  if (options.testsDir === '') throw new Error('--tests-dir <librdkafka>/tests is required');
  if (!(options.timeoutSeconds > 0)) throw new Error('--timeout-s takes a positive number of seconds');
  return options;
}

// The suite's summary line for a test: "| <name> | <STATE> | <seconds>s | <reason>".
const ANSI = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g');

function summaryOf(name: string, output: string): { state: string; detail: string } | undefined {
  for (const line of output.replace(ANSI, '').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (cells[1] === name && cells[2] !== undefined)
      return { state: cells[2], detail: cells.slice(4).join(' ').trim() };
  }
  return undefined;
}

/** The tests sharing one number (the suite selects by number), alone in one test-runner and its own process group. */
function runNumber(tests: readonly SuiteTest[], options: Options, conf: string, quick: boolean): Promise<Outcome[]> {
  const started = Date.now();
  // -L and -K leave out the same number's local and known-issue tests, as selectTests does.
  const flags = [...(quick ? ['-Q'] : []), '-E', '-L', '-K'];
  const child = spawn(join(options.testsDir, 'test-runner'), flags, {
    cwd: options.testsDir,
    // Its own process group, so a timeout ends the test and anything it started.
    detached: true,
    env: {
      ...process.env,
      // The libraries just built, not the system's librdkafka (what run-test.sh sets).
      LD_LIBRARY_PATH: [join(options.testsDir, '..', 'src'), join(options.testsDir, '..', 'src-cpp')].join(':'),
      RDKAFKA_TEST_CONF: conf,
      TEST_KAFKA_VERSION: KAFKA_VERSION,
      TESTS: tests[0]?.number,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, options.timeoutSeconds * 1000);
  return new Promise((resolve) => {
    child.once('close', () => {
      clearTimeout(timer);
      const seconds = (Date.now() - started) / 1000;
      const plain = output.replace(ANSI, '');
      const tail = plain.trimEnd().split('\n').slice(-FAILURE_TAIL_LINES).join('\n');
      // The whole output of every run, for the failures' context.
      writeFileSync(join(options.logsDir, `${tests[0]?.number ?? 'none'}.log`), plain);
      resolve(tests.map((test) => verdictOf(test, output, timedOut, seconds, tail)));
    });
  });
}

function verdictOf(test: SuiteTest, output: string, timedOut: boolean, seconds: number, tail: string): Outcome {
  const summary = summaryOf(test.name, output);
  if (timedOut) return { test, verdict: 'TIMEOUT', seconds, detail: tail };
  if (summary?.state === 'SKIPPED') return { test, verdict: 'SKIPPED', seconds, detail: summary.detail };
  if (summary?.state === 'PASSED') return { test, verdict: 'PASSED', seconds, detail: '' };
  return { test, verdict: 'FAILED', seconds, detail: summary?.detail || failureOf(test.name, output) || tail };
}

/** The suite's own words for a test's failure: the line after its `### Test "<name>..." failed` banner. */
function failureOf(name: string, output: string): string | undefined {
  const lines = output.replace(ANSI, '').split('\n');
  const banner = lines.findIndex((line) => line.startsWith(`### Test "${name}`));
  return banner < 0 ? undefined : `${lines[banner]}\n${lines[banner + 1] ?? ''}`;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function writeConf(dir: string, broker: string): string {
  const conf = join(dir, 'test.conf');
  writeFileSync(
    conf,
    [
      `bootstrap.servers=${broker}`,
      `test.timeout.multiplier=${TIMEOUT_MULTIPLIER}`,
      // Fresh topic names every run: one standalone serves every test, and a rerun finds earlier topics.
      'test.topic.random=true',
      '',
    ].join('\n'),
  );
  return conf;
}

function report(outcome: Outcome): void {
  const line = `${outcome.verdict.padEnd(7)} ${outcome.test.name.padEnd(48)} ${outcome.seconds.toFixed(1).padStart(7)} s`;
  console.log(outcome.verdict === 'PASSED' ? line : `${line}  ${outcome.detail.split('\n')[0] ?? ''}`);
  if (outcome.verdict === 'FAILED' || outcome.verdict === 'TIMEOUT') {
    for (const detailLine of outcome.detail.split('\n').slice(1)) console.log(`        ${detailLine}`);
  }
}

interface Broker {
  /** The suite's test.conf naming this standalone. */
  readonly conf: string;
  stop(): Promise<void>;
}

/** A standalone on free ports for the suite, with its own data directory and test.conf. */
async function startBroker(extraArgs: readonly string[]): Promise<Broker> {
  const dataDir = mkdtempSync(join(tmpdir(), 'librdkafka-tests-'));
  const [grpcPort, kafkaPort] = [await freePort(), await freePort()];
  const args = [...GATEWAY_ARGS, ...extraArgs, '--kafka-port', String(kafkaPort)];
  const standalone = await startStandalone(dataDir, grpcPort, args);
  const stop = async () => {
    await stopChild(standalone);
    rmSync(dataDir, { recursive: true, force: true });
  };
  // The gRPC port opens first; the Kafka listener a moment later. A listener that never opens leaves nothing behind.
  await waitForPort(kafkaPort, 60_000).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    conf: writeConf(dataDir, `127.0.0.1:${kafkaPort}`),
    stop,
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const all = suiteTests(readFileSync(join(options.testsDir, 'test.c'), 'utf8'));
  const { run, excluded } = selectTests(all, options.quick ? QUICK_SUBSET : options.only);
  mkdirSync(options.logsDir, { recursive: true });
  console.log(`each test number's whole output: ${options.logsDir}/<number>.log`);
  for (const test of excluded) console.log(`EXCLUDED ${test.name}: ${EXCLUDED.get(test.name) ?? ''}`);
  // One standalone per kind, started when a test first needs it.
  const brokers = new Map<boolean, Promise<Broker>>();
  const brokerFor = (asOnKafka: boolean): Promise<Broker> => {
    const known = brokers.get(asOnKafka) ?? startBroker(asOnKafka ? [] : NO_INITIAL_DELAY);
    brokers.set(asOnKafka, known);
    return known;
  };
  const started = Date.now();
  const outcomes: Outcome[] = [];
  try {
    for (const number of new Set(run.map((test) => test.number))) {
      const tests = run.filter((test) => test.number === number);
      const asOnKafka = tests.some((test) => AS_ON_KAFKA.has(test.name));
      const { conf } = await brokerFor(asOnKafka);
      for (const outcome of await runNumber(tests, options, conf, !asOnKafka)) {
        outcomes.push(outcome);
        report(outcome);
      }
    }
  } finally {
    for (const broker of brokers.values()) await (await broker).stop();
  }
  const count = (verdict: Verdict): number => outcomes.filter((outcome) => outcome.verdict === verdict).length;
  const failed = count('FAILED') + count('TIMEOUT');
  console.log(
    `\nlibrdkafka suite: ${outcomes.length} run in ${((Date.now() - started) / 1000).toFixed(0)} s: ` +
      `${count('PASSED')} passed, ${count('FAILED')} failed, ${count('TIMEOUT')} timed out, ` +
      `${count('SKIPPED')} skipped by the suite, ${excluded.length} excluded`,
  );
  console.log(`${count('PASSED')} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
