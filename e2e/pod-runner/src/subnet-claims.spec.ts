import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { SUBNET_CLAIMS_DIR } from './network.js';
import { REGISTRY_DIR } from './run-registry.js';

/*
 * Two pod runs that start together (two test workers) must not take one
 * subnet: neither has made its bridge yet when the other looks, so only the
 * claim tells them apart. Each picker here is its own process, as the
 * workers are.
 */

const MAIN = join(__dirname, 'testing', 'pick-subnet-main.ts');
const PREFIX = `llprtest${process.pid}`;
const WAIT_MS = 20_000;

function picker(name: string, hold: boolean): { child: ChildProcess; subnet: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, `${PREFIX}${name}`, hold ? 'hold' : 'once'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const subnet = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`picker ${name} printed nothing in ${WAIT_MS} ms`)), WAIT_MS);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) {
        clearTimeout(timer);
        resolve(output.trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!output.includes('\n')) reject(new Error(`picker ${name} exited ${code} without a subnet`));
    });
  });
  return { child, subnet };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function removeTestClaims(): void {
  if (existsSync(REGISTRY_DIR)) {
    for (const file of readdirSync(REGISTRY_DIR).filter((name) => name.startsWith(PREFIX)))
      rmSync(join(REGISTRY_DIR, file), { force: true });
  }
  if (!existsSync(SUBNET_CLAIMS_DIR)) return;
  for (const file of readdirSync(SUBNET_CLAIMS_DIR)) {
    const path = join(SUBNET_CLAIMS_DIR, file);
    try {
      if (readFileSync(path, 'utf8').includes(PREFIX)) rmSync(path, { force: true });
    } catch {
      // Gone already.
    }
  }
}

/** Who holds a subnet's claim now: the claim file's text, or '' when nobody does (no file). */
function claimOf(subnet: string): string {
  try {
    return readFileSync(join(SUBNET_CLAIMS_DIR, subnet.split('.')[2]!), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

describe('subnet claims', () => {
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    removeTestClaims();
  });

  it('give a second run another subnet while the first, not yet on the network, holds its own', async () => {
    const first = picker('a', true);
    children.push(first.child);
    const held = await first.subnet;
    const second = picker('b', false);
    children.push(second.child);
    expect(await second.subnet).not.toBe(held);
  });

  it('pass to a new run once the run that held them is gone', async () => {
    const first = picker('a', true);
    children.push(first.child);
    const held = await first.subnet;
    first.child.kill('SIGKILL');
    await exited(first.child);
    const next = picker('c', false);
    children.push(next.child);
    const taken = await next.subnet;
    if (taken !== held) {
      // Only a pod run in another test worker that reclaimed it first may have it; the dead picker's claim is gone.
      // That run may also have ended and released it since: no claim file at all is gone too.
      expect(claimOf(held)).not.toContain(PREFIX);
    }
  });
});
