import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { createBridge, createPodNetwork, ip, pickSubnet, removeByPrefix, removePodNetwork } from './network.js';
import { newRunPrefix, registerRun, unregisterRun } from './run-registry.js';

/*
 * A pod's neighbour entry for a cluster IP is only refreshed when the pod
 * itself asks again, up to a minute later. If the bridge's MAC moved
 * meanwhile (a bridge left to its default takes the lowest MAC of its ports),
 * the pod's connections to every Service hung that long while the runner's
 * probes passed: the metadata Service stalls of CI. The veths here get MACs
 * that would move such a bridge: each joining one lower than all before it,
 * then the lowest leaving.
 */

const prefix = newRunPrefix();
const bridge = `${prefix}br`;
const PORT = 7000;
/** Far more than a connection on one bridge takes; a dropped SYN is not answered within it. */
const CONNECT_TIMEOUT_MS = 2_000;

let subnet = '';
let server: Server | undefined;

function bridgeMac(): string {
  return readFileSync(`/sys/class/net/${bridge}/address`, 'utf8').trim();
}

async function podNetwork(name: string, host: number, mac: string): Promise<void> {
  await createPodNetwork(`${prefix}-${name}`, `${prefix}v${name}`, bridge, `${subnet}.${host}`);
  await ip(['link', 'set', `${prefix}v${name}`, 'address', mac]);
}

/** Whether a TCP connection from the pod's namespace to the cluster IP opens in time. */
function connectsFrom(name: string): Promise<boolean> {
  const script =
    `const s = require('node:net').connect({ host: '${subnet}.254', port: ${PORT}, timeout: ${CONNECT_TIMEOUT_MS} });` +
    `s.on('connect', () => process.exit(0)); s.on('timeout', () => process.exit(1)); s.on('error', () => process.exit(2));`;
  return new Promise((resolve) => {
    const child = spawn('ip', ['netns', 'exec', `${prefix}-${name}`, process.execPath, '-e', script], {
      stdio: 'ignore',
    });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

describe('the run bridge', () => {
  beforeAll(async () => {
    registerRun({ prefix, pid: process.pid, runDir: tmpdir(), startedAt: new Date().toISOString() });
    subnet = await pickSubnet(prefix);
    await createBridge(bridge, subnet);
    await ip(['addr', 'add', `${subnet}.254/32`, 'dev', bridge]);
    server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server!.listen(PORT, `${subnet}.254`, () => resolve()));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    removeByPrefix(prefix);
    unregisterRun(prefix);
  });

  it('keeps its MAC as pods join and leave, so a pod keeps reaching a cluster IP', async () => {
    const mac = bridgeMac();
    await podNetwork('a', 2, 'fe:ff:ff:ff:ff:fe');
    await podNetwork('b', 3, '00:00:00:00:00:02');
    // Pod a learns the cluster IP's MAC now; it asks again only once that entry has aged.
    expect(await connectsFrom('a')).toBe(true);
    await podNetwork('c', 4, '00:00:00:00:00:01');
    expect(await connectsFrom('a')).toBe(true);
    await removePodNetwork(`${prefix}-c`, `${prefix}vc`);
    expect(await connectsFrom('a')).toBe(true);
    expect(bridgeMac()).toBe(mac);
  }, 30_000);
});
