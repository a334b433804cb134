// Where a process's CPU went, by package, from a V8 CPU profile (`--cpu-prof`):
// each sample is charged to the nearest frame above it that belongs to a
// package (libs/<name> or node_modules/<name>), so Node's own internals count
// for the package that called them (a socket write under ioredis is ioredis's
// cost). Samples in no package are V8's own: GC, compiling, the event loop.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Microseconds of CPU per package over a window of the profile. */
export interface Breakdown {
  busyMicros: number;
  byPackage: Map<string, number>;
}

/** The package a frame's script belongs to, or undefined for Node's internals and native code. */
function packageOf(url: string): string | undefined {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency !== null) return dependency[1];
  const ours = /\/(libs|apps)\/([^/]+)\//.exec(url);
  return ours === null ? undefined : `${ours[1]}/${ours[2]}`;
}

/**
 * Charges the samples taken between `fromMicros` and `toMicros` (the clock of
 * process.hrtime, which V8's profile timestamps share on Linux) to packages.
 */
export function breakdown(path: string, fromMicros: number, toMicros: number): Breakdown {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const charged = new Map<number, string>();
  const chargeOf = (id: number): string => {
    let owner = charged.get(id);
    if (owner !== undefined) return owner;
    const node = byId.get(id)!;
    const name = node.callFrame.functionName;
    if (name === '(garbage collector)' || name === '(program)' || name === '(idle)') owner = name;
    else owner = packageOf(node.callFrame.url) ?? (parent.has(id) ? chargeOf(parent.get(id)!) : '(native)');
    charged.set(id, owner);
    return owner;
  };
  const byPackage = new Map<string, number>();
  let busyMicros = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at < fromMicros || at > toMicros) return;
    const owner = chargeOf(id);
    if (owner === '(idle)') return;
    busyMicros += delta;
    byPackage.set(owner, (byPackage.get(owner) ?? 0) + delta);
  });
  return { busyMicros, byPackage };
}

/** Rows for console.table: each package's share and microseconds per message, largest first. */
export function breakdownRows(result: Breakdown, messages: number, atLeastShare = 0.005) {
  return [...result.byPackage]
    .sort((a, b) => b[1] - a[1])
    .filter(([, micros]) => micros / result.busyMicros >= atLeastShare)
    .map(([name, micros]) => ({
      package: name,
      share: `${((100 * micros) / result.busyMicros).toFixed(1)}%`,
      'µs/msg': Math.round((micros / messages) * 100) / 100,
    }));
}
