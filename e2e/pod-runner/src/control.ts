import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import type { PodRunner } from './pod-runner.js';
import { DEV_OVERLAY } from './overlay-references.js';
import { PodRunnerReason } from './reasons.js';

/*
 * How later `npm run pods -- ...` commands reach the runner that `npm run
 * pods -- up --from-manifests` started: the run folder holds state.json
 * (prefix, pid, subnet, socket) and control.sock, a Unix socket taking one
 * JSON request per connection ({command, args}) and answering one JSON line.
 */

/** The run folder `up --from-manifests` uses unless told. */
export const DEFAULT_RUN_DIR = '/tmp/ledgerline-pods/current';
/** How long a control request may take (a rollout restart of a service waits for its pods). */
const CONTROL_TIMEOUT_MS = 900_000;
/** The largest request or answer read. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export interface RunState {
  prefix: string;
  pid: number;
  subnet: string;
  socket: string;
  runDir: string;
  overlay: string;
}

export function readRunState(runDir: string): RunState {
  const file = join(runDir, 'state.json');
  if (!existsSync(file)) {
    throw new LedgerlineError(
      'FAILED_PRECONDITION',
      PodRunnerReason.NO_RUNNER,
      `no pod run in ${runDir}: start one with 'npm run pods -- up --from-manifests ${DEV_OVERLAY}'`,
    );
  }
  return JSON.parse(readFileSync(file, 'utf8')) as RunState;
}

type Handler = (runner: PodRunner, args: string[]) => Promise<unknown>;

function count(value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 50) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      PodRunnerReason.NO_SUCH_OBJECT,
      `replicas must be 0 to 50, not ${value}`,
    );
  }
  return parsed;
}

/** The bound of a drain's evictions: 1 ms to an hour. */
function milliseconds(value: string | undefined): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 3_600_000) {
    throw new LedgerlineError(
      'INVALID_ARGUMENT',
      PodRunnerReason.NO_SUCH_OBJECT,
      `a drain's timeout is 1 to 3600000 ms, not ${value}`,
    );
  }
  return parsed;
}

const HANDLERS: Record<string, Handler> = {
  pods: async (runner) => runner.status(),
  scale: async (runner, [name, replicas]) => runner.scale(name!, count(replicas)),
  'delete-pod': async (runner, [name]) => runner.deletePod(name!),
  // The bound comes first, then the pods.
  drain: async (runner, [timeoutMs, ...pods]) => runner.drain(pods, milliseconds(timeoutMs)),
  'rollout-restart': async (runner, [name]) => runner.rolloutRestart(name!),
  partition: async (runner, [pod, ...from]) => (await runner.partition(pod!, from)).length,
  heal: async (runner) => runner.heal(),
};

/** Serves the control socket for `runner` and writes state.json; `down` is handled by the caller's `onDown`. */
export function serveControl(runner: PodRunner, overlay: string, onDown: () => Promise<void>): Promise<Server> {
  const socket = join(runner.runDir, 'control.sock');
  rmSync(socket, { force: true });
  const server = createServer((connection) => {
    let request = '';
    connection.on('data', (chunk: Buffer) => {
      request += chunk.toString();
      if (request.length > MAX_MESSAGE_BYTES) connection.destroy();
      if (!request.includes('\n')) return;
      const answer = (body: unknown): void => void connection.end(`${JSON.stringify(body)}\n`);
      (async () => {
        try {
          const { command, args } = JSON.parse(request) as { command: string; args: string[] };
          if (command === 'down') {
            answer({ ok: true, result: 'stopping' });
            await onDown();
            return;
          }
          const handler = HANDLERS[command];
          if (handler === undefined) {
            throw new LedgerlineError('INVALID_ARGUMENT', PodRunnerReason.NO_SUCH_OBJECT, `unknown command ${command}`);
          }
          answer({ ok: true, result: (await handler(runner, args ?? [])) ?? null });
        } catch (error) {
          const e = LedgerlineError.from(error);
          answer({ ok: false, code: e.code, reason: e.reason, message: e.message });
        }
      })().catch(() => connection.destroy());
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => {
      const state: RunState = {
        prefix: runner.prefix,
        pid: process.pid,
        subnet: runner.subnet,
        socket,
        runDir: runner.runDir,
        overlay,
      };
      writeFileSync(join(runner.runDir, 'state.json'), JSON.stringify(state, null, 2));
      resolve(server);
    });
  });
}

/** Sends one command to the runner of `runDir` and returns its result (or throws its error). */
export function callRunner(runDir: string, command: string, args: readonly string[] = []): Promise<unknown> {
  const state = readRunState(runDir);
  return new Promise((resolve, reject) => {
    const connection = connect(state.socket);
    let answer = '';
    const timer = setTimeout(() => connection.destroy(new Error('timeout')), CONTROL_TIMEOUT_MS);
    connection.on('connect', () => connection.write(`${JSON.stringify({ command, args })}\n`));
    connection.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    connection.on('error', (error) => {
      clearTimeout(timer);
      reject(
        new LedgerlineError(
          'UNAVAILABLE',
          PodRunnerReason.NO_RUNNER,
          `the pod runner of ${runDir} (pid ${state.pid}) does not answer: ${error.message}`,
        ),
      );
    });
    connection.on('end', () => {
      clearTimeout(timer);
      const body = JSON.parse(answer) as {
        ok: boolean;
        result?: unknown;
        code?: string;
        reason?: string;
        message?: string;
      };
      if (body.ok) resolve(body.result);
      else reject(new LedgerlineError(body.code as 'INTERNAL', body.reason ?? 'INTERNAL', body.message ?? 'failed'));
    });
  });
}
