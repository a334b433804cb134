import { LedgerlineError } from '@ledgerline/errors';
import type { ExpectedVersion, MetadataStore } from '../store.js';

/*
 * A linearizability check of get / put / delete (test code only): several
 * clients run random concurrent histories against a few paths, every call is
 * recorded with the logical times it was issued and answered, and each path's
 * history must be explainable by some order of the calls, consistent with
 * those times, in which a sequential model of one versioned node gives every
 * recorded answer (Wing and Gong's search). A call that failed UNAVAILABLE
 * may or may not have taken effect, between being issued and failing: the
 * stores never re-send a call, so it cannot take effect after its failure
 * was reported (a re-sent call that did would break linearizability here).
 */

type Answer =
  | { kind: 'value'; version: number; value: string }
  | { kind: 'absent' }
  | { kind: 'version'; version: number }
  | { kind: 'done' }
  | { kind: 'bad-version' }
  | { kind: 'unknown' };

export interface CasCall {
  client: number;
  path: string;
  op: 'get' | 'put' | 'delete';
  /** The value a put writes: unique per put, so a read names the put it saw. */
  value?: string;
  expected?: ExpectedVersion;
  invokedAt: number;
  /** When the answer came; for an unknown outcome (UNAVAILABLE), the latest time the call may have taken effect. */
  answeredAt: number;
  answer: Answer;
}

interface NodeState {
  version: number;
  value: string;
}

/** What the sequential model answers, and the state after; undefined when the call could not give `answer`. */
function step(state: NodeState | undefined, call: CasCall): { state: NodeState | undefined } | undefined {
  const { answer } = call;
  if (call.op === 'get') {
    if (answer.kind === 'unknown') return { state };
    const matches =
      state === undefined
        ? answer.kind === 'absent'
        : answer.kind === 'value' && answer.version === state.version && answer.value === state.value;
    return matches ? { state } : undefined;
  }
  const expected = call.expected;
  const conflict =
    expected === 'absent'
      ? state !== undefined
      : typeof expected === 'number' && (state === undefined || state.version !== expected);
  if (conflict) return answer.kind === 'bad-version' || answer.kind === 'unknown' ? { state } : undefined;
  if (call.op === 'put') {
    const next = { version: (state?.version ?? 0) + 1, value: call.value! };
    const matches = answer.kind === 'unknown' || (answer.kind === 'version' && answer.version === next.version);
    return matches ? { state: next } : undefined;
  }
  return answer.kind === 'done' || answer.kind === 'unknown' ? { state: undefined } : undefined;
}

/**
 * Searches for a linearization of one path's calls. Returns undefined when one
 * exists, else a description of the history. The search visits each
 * (linearized set, state) pair once, and gives up past `maxVisits`.
 */
export function findLinearization(calls: CasCall[], maxVisits = 200_000): string | undefined {
  const count = calls.length;
  const visited = new Set<string>();
  let visits = 0;
  const mustLinearize = calls.map((c) => c.answer.kind !== 'unknown');
  const search = (done: boolean[], state: NodeState | undefined, left: number): boolean => {
    if (left === 0) return true;
    const key = `${done.map((d) => (d ? 1 : 0)).join('')}|${state === undefined ? '-' : `${state.version}:${state.value}`}`;
    if (visited.has(key)) return false;
    visited.add(key);
    if (++visits > maxVisits) throw new Error(`the linearizability search passed ${maxVisits} states`);
    // A call may come next only if no pending call was answered before it was issued.
    let firstAnswer = Infinity;
    for (let i = 0; i < count; i++) if (!done[i]) firstAnswer = Math.min(firstAnswer, calls[i]!.answeredAt);
    for (let i = 0; i < count; i++) {
      if (done[i] || calls[i]!.invokedAt > firstAnswer) continue;
      done[i] = true;
      // A call of unknown outcome may never have happened at all.
      if (!mustLinearize[i] && search(done, state, left - 1)) {
        done[i] = false;
        return true;
      }
      const next = step(state, calls[i]!);
      // Applying such a call where it changes nothing is the same as dropping it, already tried.
      const worthTrying = next !== undefined && (mustLinearize[i] || !sameState(next.state, state));
      const found = worthTrying && search(done, next.state, left - 1);
      done[i] = false;
      if (found) return true;
    }
    return false;
  };
  if (search(new Array<boolean>(count).fill(false), undefined, count)) return undefined;
  return calls
    .map(
      (c) =>
        `  c${c.client} [${c.invokedAt}, ${c.answeredAt}] ${c.op}${describeCall(c)} -> ${JSON.stringify(c.answer)}`,
    )
    .join('\n');
}

function sameState(a: NodeState | undefined, b: NodeState | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.version === b.version && a.value === b.value);
}

function describeCall(call: CasCall): string {
  const parts = [call.value === undefined ? '' : ` ${call.value}`];
  if (call.expected !== undefined) parts.push(` expect ${call.expected}`);
  return parts.join('');
}

/** A small seeded generator, so a failing history can be run again from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface CasWorkload {
  clients: MetadataStore[];
  paths: string[];
  callsPerClient: number;
  seed: number;
  /** Runs between two calls of a client (to let disturbances interleave). */
  between?: () => Promise<void>;
}

/** Runs the clients concurrently, each issuing its calls one after another; returns every call. */
export async function runCasWorkload(workload: CasWorkload): Promise<CasCall[]> {
  const random = seededRandom(workload.seed);
  let clock = 0;
  const calls: CasCall[] = [];
  let nextValue = 0;
  const client = async (index: number): Promise<void> => {
    const store = workload.clients[index]!;
    const seen = new Map<string, number>();
    for (let i = 0; i < workload.callsPerClient; i++) {
      await (workload.between?.() ?? new Promise((resolve) => setImmediate(resolve)));
      const path = workload.paths[Math.floor(random() * workload.paths.length)]!;
      const call = chooseCall(random(), index, path, seen.get(path), `c${index}v${nextValue++}`);
      call.invokedAt = ++clock;
      call.answer = await perform(store, call);
      // A failed call is never re-sent, so it took effect, if at all, before its failure was reported.
      call.answeredAt = ++clock;
      if (call.answer.kind === 'value' || call.answer.kind === 'version') seen.set(path, call.answer.version);
      if (call.answer.kind === 'absent' || call.answer.kind === 'done') seen.delete(path);
      calls.push(call);
    }
  };
  await Promise.all(workload.clients.map((_, index) => client(index)));
  return calls;
}

function chooseCall(roll: number, client: number, path: string, seen: number | undefined, value: string): CasCall {
  const base = { client, path, invokedAt: 0, answeredAt: 0, answer: { kind: 'unknown' } as Answer };
  if (roll < 0.3) return { ...base, op: 'get' };
  // Compare-and-set on the version this client saw last: the update a lost-update bug would lose.
  if (roll < 0.65) return { ...base, op: 'put', value, expected: seen ?? 'absent' };
  if (roll < 0.75) return { ...base, op: 'put', value, expected: 'absent' };
  if (roll < 0.85) return { ...base, op: 'put', value };
  if (roll < 0.95 && seen !== undefined) return { ...base, op: 'delete', expected: seen };
  return { ...base, op: 'delete' };
}

async function perform(store: MetadataStore, call: CasCall): Promise<Answer> {
  try {
    if (call.op === 'get') {
      const node = await store.get(call.path);
      if (node === undefined) return { kind: 'absent' };
      return { kind: 'value', version: node.version, value: new TextDecoder().decode(node.value) };
    }
    if (call.op === 'put') {
      const options = call.expected === undefined ? {} : { expectedVersion: call.expected };
      return { kind: 'version', version: await store.put(call.path, new TextEncoder().encode(call.value), options) };
    }
    await store.delete(call.path, typeof call.expected === 'number' ? { expectedVersion: call.expected } : {});
    return { kind: 'done' };
  } catch (thrown) {
    if (LedgerlineError.is(thrown, 'BAD_VERSION')) return { kind: 'bad-version' };
    if (thrown instanceof LedgerlineError && thrown.code === 'UNAVAILABLE') return { kind: 'unknown' };
    throw thrown;
  }
}

/** Every path's calls must linearize; returns the histories that do not. */
export function nonLinearizablePaths(calls: CasCall[]): string[] {
  const byPath = new Map<string, CasCall[]>();
  // A read with no answer changed nothing and constrains nothing.
  const informative = calls.filter((call) => call.op !== 'get' || call.answer.kind !== 'unknown');
  for (const call of informative) byPath.set(call.path, [...(byPath.get(call.path) ?? []), call]);
  const failures: string[] = [];
  for (const [path, history] of byPath) {
    const problem = findLinearization(history);
    if (problem !== undefined) failures.push(`${path} has no linearization:\n${problem}`);
  }
  return failures;
}
