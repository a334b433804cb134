import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerlineError } from '@ledgerline/errors';
import { PodRunnerReason } from './reasons.js';

/*
 * The pod network: one bridge per run with the node's address (.1 of the
 * run's /24), one network namespace per pod joined to it by a veth pair.
 * Every name starts with the run's prefix, so a cleanup finds all of it by
 * name even when the runner that made it is gone.
 */

/** How long one `ip` command may take. */
const IP_TIMEOUT_MS = 10_000;
/** Where `ip netns exec` finds the files it binds over /etc for a namespace. */
export const NETNS_ETC = '/etc/netns';

export function ip(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('ip', args, { timeout: IP_TIMEOUT_MS }, (error, stdout, stderr) =>
      error === null
        ? resolve(stdout)
        : reject(
            new LedgerlineError(
              'FAILED_PRECONDITION',
              PodRunnerReason.NETWORK_FAILED,
              `ip ${args.join(' ')}: ${stderr.trim() || error.message} (the pod runner needs root and network namespaces)`,
            ),
          ),
    ),
  );
}

/** The third octet the last run of this process took: the next run starts looking past it. */
let lastOctet = 39;
/** One file per /24 a live run holds, named by its third octet, holding the run's pid and prefix. */
export const SUBNET_CLAIMS_DIR = '/tmp/ledgerline-pod-runs/subnets';

/**
 * The /24 the run's addresses come from: 10.213.<octet>.0/24 for the next
 * octet no address or route uses and no other live run has claimed. The claim
 * (a file made with O_EXCL) settles two runs that start at the same moment,
 * as two test workers do, which would otherwise both see the subnet free and
 * make two bridges with the same addresses. A run never takes the subnet the
 * run before it in this process had, so nothing the kernel still holds for
 * those addresses (neighbour entries) meets the new pods.
 */
export async function pickSubnet(prefix: string): Promise<string> {
  const used = (await ip(['-4', 'addr'])) + (await ip(['-4', 'route']));
  mkdirSync(SUBNET_CLAIMS_DIR, { recursive: true });
  for (let step = 1; step <= 256; step++) {
    const octet = (lastOctet + step) % 256;
    const candidate = `10.213.${octet}`;
    if (used.includes(`${candidate}.`) || !claimSubnet(octet, prefix)) continue;
    lastOctet = octet;
    return candidate;
  }
  throw new LedgerlineError('RESOURCE_EXHAUSTED', PodRunnerReason.NETWORK_FAILED, 'every 10.213.x.0/24 is in use');
}

/**
 * Takes the claim on `octet`; false when another run holds it. A claim of a
 * run whose process is gone is released by sweepStaleRuns, which every `up`
 * runs before it picks.
 */
function claimSubnet(octet: number, prefix: string): boolean {
  try {
    writeFileSync(join(SUBNET_CLAIMS_DIR, String(octet)), `${process.pid} ${prefix}`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * A random locally administered unicast MAC. Given to the bridge when it is
 * made, it stays the bridge's: a bridge left to its default takes the lowest
 * MAC of its ports and changes it whenever a pod's veth with a lower one joins
 * or the port whose MAC it had leaves. A pod's neighbour entries for the
 * node's addresses (the cluster IPs most of all: nothing refreshes those)
 * then keep the old MAC for up to a minute (reachable time, then the delay
 * and the probes), and the bridge drops what the pod sends to it, so new and
 * open connections to a Service hang, while the runner's probes, which the
 * pod answers through its entry for the bridge's .1, pass.
 */
export function randomBridgeMac(): string {
  const bytes = randomBytes(6);
  bytes[0] = (bytes[0]! & 0xfc) | 0x02;
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join(':');
}

export async function createBridge(name: string, subnet: string): Promise<void> {
  // The address set at creation is one the kernel never recalculates from the ports (see randomBridgeMac).
  await ip(['link', 'add', name, 'address', randomBridgeMac(), 'type', 'bridge']);
  await ip(['addr', 'add', `${subnet}.1/24`, 'dev', name]);
  await ip(['link', 'set', name, 'up']);
}

/** A namespace whose eth0 has `address` on the bridge, with loopback up and files for /etc/hosts and resolv.conf. */
export async function createPodNetwork(netns: string, veth: string, bridge: string, address: string): Promise<void> {
  mkdirSync(`${NETNS_ETC}/${netns}`, { recursive: true });
  writeFileSync(`${NETNS_ETC}/${netns}/hosts`, `127.0.0.1 localhost\n${address} ${netns}\n`);
  // No cluster DNS: a name the hosts file lacks fails at once instead of waiting on the machine's resolver.
  writeFileSync(`${NETNS_ETC}/${netns}/resolv.conf`, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n');
  await ip(['netns', 'add', netns]);
  await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
  await ip(['link', 'set', veth, 'master', bridge, 'up']);
  await ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
  await ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
  await ip(['-n', netns, 'link', 'set', 'lo', 'up']);
}

/** Removes a pod's namespace (its end of the veth goes with it) and its /etc files; what is gone already is fine. */
export async function removePodNetwork(netns: string, veth: string): Promise<void> {
  await ip(['netns', 'del', netns]).catch(() => undefined);
  await ip(['link', 'del', veth]).catch(() => undefined);
  rmSync(`${NETNS_ETC}/${netns}`, { recursive: true, force: true });
}

/** Drops everything from the namespace to `address` (a blackhole route: this kernel has no netem). */
export async function addBlackhole(netns: string, address: string): Promise<void> {
  await ip(['-n', netns, 'route', 'replace', 'blackhole', `${address}/32`]);
}

export async function removeBlackhole(netns: string, address: string): Promise<void> {
  await ip(['-n', netns, 'route', 'del', 'blackhole', `${address}/32`]).catch(() => undefined);
}

/** Writes in place (same inode): `ip netns exec` bind-mounts the file, so a replaced file would go unseen. */
export function writeHostsFile(netns: string, content: string): void {
  writeFileSync(`${NETNS_ETC}/${netns}/hosts`, content);
}

function ipSync(args: string[]): string {
  return spawnSync('ip', args, { encoding: 'utf8', timeout: IP_TIMEOUT_MS }).stdout ?? '';
}

/** The namespaces whose names start with `prefix`. */
export function namespacesWithPrefix(prefix: string): string[] {
  return ipSync(['netns', 'list'])
    .split('\n')
    .map((line) => line.split(' ')[0]!)
    .filter((name) => name.startsWith(prefix));
}

/** The links whose names start with `prefix`. */
export function linksWithPrefix(prefix: string): string[] {
  return ipSync(['-o', 'link', 'show'])
    .split('\n')
    .map((line) => /^\d+: ([^:@]+)/.exec(line)?.[1] ?? '')
    .filter((name) => name.startsWith(prefix));
}

/** The pids of processes in a namespace (`ip netns pids`). */
export function namespacePids(netns: string): number[] {
  return ipSync(['netns', 'pids', netns])
    .split('\n')
    .filter((line) => /^\d+$/.test(line.trim()))
    .map(Number);
}

/**
 * Removes everything whose name starts with `prefix`, without waiting on
 * promises, so it also runs from a process's exit handler: processes in the
 * namespaces (SIGKILL), the namespaces, the links, the /etc/netns folders,
 * the claim on the subnet.
 */
export function removeByPrefix(prefix: string): void {
  for (const netns of namespacesWithPrefix(prefix)) {
    for (const pid of namespacePids(netns)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    ipSync(['netns', 'del', netns]);
    rmSync(`${NETNS_ETC}/${netns}`, { recursive: true, force: true });
  }
  for (const link of linksWithPrefix(prefix)) ipSync(['link', 'del', link]);
  if (existsSync(NETNS_ETC)) {
    for (const entry of readdirSync(NETNS_ETC).filter((name) => name.startsWith(prefix)))
      rmSync(`${NETNS_ETC}/${entry}`, { recursive: true, force: true });
  }
  releaseSubnets(prefix);
}

/** Gives up the claims of the run (the claim file names its prefix after its pid). */
function releaseSubnets(prefix: string): void {
  if (!existsSync(SUBNET_CLAIMS_DIR)) return;
  for (const file of readdirSync(SUBNET_CLAIMS_DIR)) {
    const path = join(SUBNET_CLAIMS_DIR, file);
    try {
      if (readFileSync(path, 'utf8').split(' ')[1] === prefix) rmSync(path, { force: true });
    } catch {
      // Released meanwhile.
    }
  }
}
