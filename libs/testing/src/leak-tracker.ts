// Loaded by the Jest test environment outside its module mapper: imports carry no .js suffix.
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Server, Socket } from 'node:net';

/*
 * Finds what a test file left running: timers, sockets, servers and child
 * processes that were not there when the file started. Only what keeps the
 * event loop alive counts (an unref'd timer or socket is allowed to stay),
 * except child processes, which count even when unref'd: a process left
 * running outlives the test run.
 */

/** How long resources that are closing may take to go before they count as left behind. */
export const LEAK_SETTLE_MS = 5_000;
/** How often the settle wait looks again. */
const LEAK_POLL_MS = 20;
/** Stack frames kept for each timer's creation site (more costs time on every setTimeout). */
const TIMER_STACK_FRAMES = 12;
/** Tracked timers are swept of finished ones whenever the set doubles past this size. */
const TIMER_SWEEP_MIN = 256;

export interface Leak {
  readonly kind: 'timer' | 'socket' | 'server' | 'child process' | 'handle';
  readonly description: string;
  /** Stops the resource, so one file's leak does not keep the worker alive or spill into the next file. */
  readonly close: () => void;
}

interface TimerGlobals {
  setTimeout: typeof setTimeout;
  setInterval: typeof setInterval;
}

/** A Node timer as the timers module makes it (the fields are Node's own, stable since v11). */
interface NodeTimeout {
  _destroyed?: boolean;
  _idleTimeout?: number;
  _repeat?: number | null;
  _onTimeout?: unknown;
  hasRef(): boolean;
}

interface ProcessWithHandles {
  _getActiveHandles?: () => unknown[];
}

/** Labels for well-known ports, so a report says "the shared redis-server" rather than a number. */
export type PortLabels = ReadonlyMap<number, string>;

export class LeakTracker {
  private readonly timers = new Map<NodeTimeout, Error>();
  private sweepAt = TIMER_SWEEP_MIN;
  private baselineHandles = new Set<unknown>();
  private baselineChildren = new Set<number>();
  private baselineTimeouts = 0;

  /** Wraps the timer functions of `globals` so each timer remembers where it was created. */
  constructor(
    globals: TimerGlobals,
    private readonly portLabels: PortLabels = new Map(),
  ) {
    globals.setTimeout = this.track(globals.setTimeout);
    globals.setInterval = this.track(globals.setInterval);
  }

  /** Records what is running now; only what appears after this counts as left behind. */
  start(): void {
    this.baselineHandles = new Set(activeHandles());
    this.baselineChildren = new Set(childPids().map((c) => c.pid));
    this.baselineTimeouts = activeTimeouts();
  }

  /** What is left now, without waiting. */
  leaks(): Leak[] {
    const leaks: Leak[] = [];
    let trackedTimers = 0;
    for (const [timer, origin] of this.timers) {
      if (timer._destroyed === true) {
        this.timers.delete(timer);
        continue;
      }
      if (!timer.hasRef()) continue;
      trackedTimers++;
      leaks.push({
        kind: 'timer',
        description: describeTimer(timer, origin),
        close: () => clearTimeout(timer as never),
      });
    }
    // Timers made through the timers module rather than the globals are only counted.
    const untracked = activeTimeouts() - this.baselineTimeouts - trackedTimers;
    if (untracked > 0) {
      leaks.push({
        kind: 'timer',
        description: `${untracked} timer(s) not made through the test's setTimeout/setInterval (e.g. node:timers)`,
        close: () => undefined,
      });
    }
    const handleChildPids = new Set<number>();
    for (const handle of activeHandles()) {
      if (this.baselineHandles.has(handle) || isStdio(handle)) continue;
      const leak = this.describeHandle(handle);
      if (leak.kind === 'child process') handleChildPids.add((handle as ChildProcess).pid ?? -1);
      leaks.push(leak);
    }
    for (const child of childPids()) {
      if (this.baselineChildren.has(child.pid) || handleChildPids.has(child.pid)) continue;
      leaks.push({
        kind: 'child process',
        description: `pid ${child.pid} (${child.command}), still running`,
        close: () => killQuietly(child.pid),
      });
    }
    return leaks;
  }

  /**
   * Waits, up to `settleMs`, for everything the file started to go (sockets
   * and children close asynchronously after a test ends them), and returns
   * whatever is still there then.
   */
  async settle(settleMs = LEAK_SETTLE_MS): Promise<Leak[]> {
    const deadline = Date.now() + settleMs;
    for (;;) {
      const leaks = this.leaks();
      if (leaks.length === 0 || Date.now() >= deadline) return leaks;
      await new Promise<void>((resolve) => setTimeout(resolve, LEAK_POLL_MS));
    }
  }

  private track<F extends typeof setTimeout | typeof setInterval>(real: F): F {
    const remember = (timer: NodeTimeout): void => {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = TIMER_STACK_FRAMES;
      const origin = new Error('timer created');
      Error.stackTraceLimit = limit;
      this.sweep();
      this.timers.set(timer, origin);
    };
    const wrapped = function (this: unknown, ...args: unknown[]) {
      const timer = (real as unknown as (...a: unknown[]) => NodeTimeout).apply(this, args);
      remember(timer);
      return timer;
    };
    // Keeps util.promisify(setTimeout) and friends working.
    Object.assign(wrapped, real);
    return wrapped as unknown as F;
  }

  /** Forgets timers that have fired or been cleared, so the map stays small in long files. */
  private sweep(): void {
    if (this.timers.size < this.sweepAt) return;
    for (const timer of this.timers.keys()) if (timer._destroyed === true) this.timers.delete(timer);
    this.sweepAt = Math.max(TIMER_SWEEP_MIN, this.timers.size * 2);
  }

  private describeHandle(handle: unknown): Leak {
    if (handle instanceof Server) {
      const address = handle.address();
      const where =
        address === null
          ? 'not listening'
          : typeof address === 'string'
            ? address
            : `${address.address}:${address.port}`;
      return { kind: 'server', description: `server on ${where}`, close: () => handle.close() };
    }
    if (handle instanceof Socket) {
      return { kind: 'socket', description: this.describeSocket(handle), close: () => handle.destroy() };
    }
    if (isChildProcess(handle)) {
      return {
        kind: 'child process',
        description: `pid ${handle.pid} (${handle.spawnargs.join(' ')}), still running`,
        close: () => {
          if (handle.pid !== undefined) killQuietly(handle.pid);
        },
      };
    }
    const name = (handle as object | null)?.constructor?.name ?? typeof handle;
    const closable = handle as { close?: () => void; unref?: () => void };
    return {
      kind: 'handle',
      description: name,
      close: () => (typeof closable.close === 'function' ? closable.close() : closable.unref?.()),
    };
  }

  private describeSocket(socket: Socket): string {
    if (socket.remotePort === undefined) {
      // A pipe (a child process's stdio, a Unix socket) or a TCP socket still connecting.
      const handle = (socket as unknown as { _handle?: { constructor?: { name?: string } } })._handle;
      return handle?.constructor?.name === 'Pipe'
        ? 'pipe (a child process stdio or Unix socket)'
        : 'socket not connected yet';
    }
    const label = this.portLabels.get(socket.remotePort) ?? this.portLabels.get(socket.localPort ?? -1);
    const suffix = label === undefined ? '' : ` (${label})`;
    return `socket ${socket.localAddress}:${socket.localPort} -> ${socket.remoteAddress}:${socket.remotePort}${suffix}`;
  }
}

/** A report a person can act on: which file, and what it left. */
export function formatLeaks(testPath: string, leaks: readonly Leak[], settleMs = LEAK_SETTLE_MS): string {
  const lines = leaks.map((leak) => `  - ${leak.kind}: ${leak.description.replace(/\n/g, '\n      ')}`);
  return [
    `${testPath} left ${leaks.length} resource(s) running ${settleMs} ms after its last test:`,
    ...lines,
    'Close them in afterAll/afterEach (quit clients, close servers, clear timers, kill children by pid), or unref what must outlive the file.',
  ].join('\n');
}

function describeTimer(timer: NodeTimeout, origin: Error): string {
  const kind = timer._repeat ? `setInterval every ${timer._repeat} ms` : `setTimeout of ${timer._idleTimeout} ms`;
  const callback = timer._onTimeout as { name?: string } | undefined;
  const name = callback?.name ? ` calling ${callback.name}()` : '';
  const frames = (origin.stack ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => !/leak-tracker\.ts|node:internal|node_modules\/jest-|node_modules\/@jest\//.test(line))
    .slice(0, 4)
    .map((line) => line.trim());
  return `${kind}${name}, created\n${frames.join('\n')}`;
}

function activeHandles(): unknown[] {
  return (process as unknown as ProcessWithHandles)._getActiveHandles?.() ?? [];
}

function activeTimeouts(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

/** Whether a handle is the process's own stdin/stdout/stderr (by fd: reading process.stdin would create it). */
function isStdio(handle: unknown): boolean {
  const fd = (handle as { _handle?: { fd?: number } } | null)?._handle?.fd;
  return handle instanceof Socket && fd !== undefined && fd >= 0 && fd <= 2;
}

function isChildProcess(handle: unknown): handle is ChildProcess {
  const h = handle as Partial<ChildProcess> | null;
  return h?.constructor?.name === 'ChildProcess' && Array.isArray(h.spawnargs);
}

interface ChildInfo {
  pid: number;
  command: string;
}

/** This process's living children, read from /proc (empty where there is no /proc). */
function childPids(): ChildInfo[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const children: ChildInfo[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces; the fields after it are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const state = fields[0];
      const ppid = Number(fields[1]);
      if (ppid !== process.pid || state === 'Z') continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      children.push({ pid: Number(entry), command });
    } catch {
      // The process ended while we looked.
    }
  }
  return children;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
