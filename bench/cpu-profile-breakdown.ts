// Where a process's CPU went, by package, from a V8 CPU profile (`--cpu-prof`):
// each sample is charged to the nearest frame above it that belongs to a
// package (libs/<name> or node_modules/<name>), so Node's own internals count
// for the package that called them (a socket write under ioredis is ioredis's
// cost). Samples in no package are V8's own: GC, compiling, the event loop.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
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

/** Charges the samples taken between `fromMicros` and `toMicros` to packages. */
export function breakdown(path: string, fromMicros: number, toMicros: number): Breakdown {
  const byPackage = new Map<string, number>();
  let busyMicros = 0;
  forEachSample(path, fromMicros, toMicros, (_node, owner, micros) => {
    busyMicros += micros;
    byPackage.set(owner, (byPackage.get(owner) ?? 0) + micros);
  });
  return { busyMicros, byPackage };
}

/** A function's self time: the samples taken in it (not in what it called), charged to a package as breakdown does. */
export interface SelfFrame {
  package: string;
  /** `name file:line`, the file without its folders. */
  frame: string;
  micros: number;
}

/**
 * The functions with the most self time over a window of the profile, the
 * `perPackage` largest of each package: where a package's share of
 * breakdown() is spent. Node's internals and native code appear under the
 * package that called them, as in breakdown().
 */
export function topSelfFrames(path: string, fromMicros: number, toMicros: number, perPackage: number): SelfFrame[] {
  const byFrame = new Map<string, SelfFrame>();
  forEachSample(path, fromMicros, toMicros, (node, owner, micros) => {
    const { functionName, url, lineNumber } = node.callFrame;
    // Sources run through tsx, whose output lines are not the source's: a TypeScript frame is named by file alone.
    const name = url.split('/').at(-1) ?? '';
    const file = url === '' ? '' : name.endsWith('.ts') ? ` ${name}` : ` ${name}:${(lineNumber ?? -1) + 1}`;
    const frame = `${functionName === '' ? '(anonymous)' : functionName}${file}`;
    const key = `${owner}\n${frame}`;
    const known = byFrame.get(key) ?? { package: owner, frame, micros: 0 };
    known.micros += micros;
    byFrame.set(key, known);
  });
  const taken = new Map<string, number>();
  return [...byFrame.values()]
    .sort((a, b) => b.micros - a.micros)
    .filter((frame) => {
      const count = taken.get(frame.package) ?? 0;
      taken.set(frame.package, count + 1);
      return count < perPackage;
    });
}

/**
 * Calls `visit` for every busy sample (not idle) taken between `fromMicros`
 * and `toMicros` (the clock of process.hrtime, which V8's profile timestamps
 * share on Linux), with its leaf node, the package charged and its duration.
 */
function forEachSample(
  path: string,
  fromMicros: number,
  toMicros: number,
  visit: (node: ProfileNode, owner: string, micros: number) => void,
): void {
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
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at < fromMicros || at > toMicros) return;
    const owner = chargeOf(id);
    if (owner !== '(idle)') visit(byId.get(id)!, owner, delta);
  });
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
