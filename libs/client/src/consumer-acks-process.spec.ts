import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AdminService } from '@ledgerline/proto';
import { closeClient, createClient as createRpcClient } from '@ledgerline/rpc';
import { freePort } from '@ledgerline/testing';
import { createClient, type LedgerlineClient, type Message } from './index.js';

// Acks against a real owner process killed between the ack and its
// persistence: `ledgerline standalone` (metadata service and writer owner in
// one process, SQLite under a throwaway directory) is frozen with SIGSTOP, so
// it cannot have read the ack, then SIGKILLed and started again on the same
// port and data. The consumer must reconnect, send the ack again, never hand
// the acknowledged message out again, and a consumer started afterwards must
// find the ack persisted.

const ROOT = resolve(__dirname, '../../..');
const MAIN = join(ROOT, 'apps/cli/src/main.ts');
const TOPIC = 'persistent://acks/process/kill';
/** A short lease, so the restarted owner takes the dead one's topics over quickly. */
const LEASE_TTL_MS = 2_000;
/** Bound on one standalone start through tsx on a busy two-core machine. */
const START_TIMEOUT_MS = 90_000;
/** Every test kills and starts the owner once: two starts' worth. */
const TEST_TIMEOUT_MS = 2 * START_TIMEOUT_MS;

// The standalone must not pick up a cluster's settings from the environment the tests run in.
const ENV = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('LEDGERLINE_')));

const text = (message: Message): string => Buffer.from(message.payload).toString();

/** `ledgerline standalone` as its own process on `port`, its data under `dataDir`. */
class StandaloneProcess {
  private child: ChildProcess | undefined;

  constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts it; resolves once it says it listens. */
  start(): Promise<void> {
    const argv = ['--import', 'tsx', MAIN, 'standalone', '--data-dir', this.dataDir, '--grpc-host', '127.0.0.1'];
    const ports = ['--grpc-port', String(this.port), '--read-only-grpc-port', '0', '--metrics-port', '0'];
    const settings = ['--lease-ttl-ms', String(LEASE_TTL_MS), '--log-level', 'warn'];
    const child = spawn(process.execPath, [...argv, ...ports, ...settings], {
      cwd: ROOT,
      env: ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    // No timer of its own: the hook's or test's timeout bounds the wait.
    return new Promise((ready, fail) => {
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (/listening on /.test(output)) ready();
      });
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('exit', (code, signal) => fail(new Error(`standalone exited (${signal ?? code}): ${output}`)));
    });
  }

  /** Sends `signal`; for SIGKILL (and SIGTERM), resolves once the process is gone. */
  async signal(signal: 'SIGSTOP' | 'SIGKILL' | 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill(signal);
    if (signal !== 'SIGSTOP') await exited;
  }
}

describe('acks against an owner process killed between the ack and its persistence', () => {
  let dir: string;
  let standalone: StandaloneProcess;
  let client: LedgerlineClient;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-acks-'));
    standalone = new StandaloneProcess(join(dir, 'data'), await freePort());
    await standalone.start();
    const admin = createRpcClient(AdminService, standalone.address);
    try {
      await admin.createTenant({ tenant: 'acks' });
      await admin.createNamespace({ namespace: 'acks/process', policies: { retentionTimeMinutes: 60n } });
      await admin.createTopic({ topic: TOPIC });
    } finally {
      closeClient(admin);
    }
    // Reconnect for as long as a restart takes; operations wait as long too.
    client = createClient({
      serviceUrl: standalone.address,
      operationTimeoutMs: START_TIMEOUT_MS,
      reconnectInitialDelayMs: 20,
      reconnectMaxDelayMs: 250,
      maxReconnectAttempts: 1_000,
    });
    const producer = await client.producer({ topic: TOPIC, batching: false });
    await Promise.all(Array.from({ length: 5 }, (_, index) => producer.send(`m${index}`)));
    await producer.close();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await client?.close();
    await standalone?.signal('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['acks resolved before persistence', false],
    ['ackReceipts', true],
  ])(
    'sends the ack again to the restarted owner and never hands the message out again (%s)',
    async (_, ackReceipts) => {
      const subscription = ackReceipts ? 'receipts' : 'fast';
      const consumer = await client.subscribe({ topic: TOPIC, subscription, initialPosition: 'earliest', ackReceipts });
      await consumer.ack(await consumer.receive());
      await consumer.flushAcks();
      const second = await consumer.receive();
      expect(text(second)).toBe('m1');

      await standalone.signal('SIGSTOP');
      let settled = false;
      const ack = consumer.ack(second).finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Fast mode: resolved though the frozen owner cannot have read it. With receipts: still waiting.
      expect(settled).toBe(!ackReceipts);
      await standalone.signal('SIGKILL');
      await standalone.start();

      await ack;
      await consumer.flushAcks();
      expect(text(await consumer.receive())).toBe('m2');
      await consumer.close();

      // A consumer started afterwards (as after a restart of the application) finds both acks persisted.
      const restarted = await client.subscribe({ topic: TOPIC, subscription });
      expect(text(await restarted.receive())).toBe('m2');
      await restarted.close();
    },
    TEST_TIMEOUT_MS,
  );
});
