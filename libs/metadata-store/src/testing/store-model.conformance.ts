import fc from 'fast-check';
import { LedgerlineError } from '@ledgerline/errors';
import type { MetadataStore } from '../store.js';

/** One step of a random history: which node, what to do, and which version to expect. */
interface Step {
  kind: 'put' | 'delete' | 'get' | 'children';
  node: number;
  /** 'none': unconditional; 'absent': create only; 'current': the model's version; 'stale': a wrong one. */
  expect: 'none' | 'absent' | 'current' | 'stale';
  value: number;
}

const NODES = ['a', 'b', 'a/x', 'c'];

const step: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom('put', 'put', 'delete', 'get', 'children'),
  node: fc.nat({ max: NODES.length - 1 }),
  expect: fc.constantFrom('none', 'absent', 'current', 'stale'),
  value: fc.nat({ max: 255 }),
});

type Outcome = { ok: unknown } | { error: string };

async function outcome(action: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await action() };
  } catch (error) {
    if (!(error instanceof LedgerlineError)) throw error;
    return { error: `${error.code}/${error.reason}` };
  }
}

/**
 * Checks a store against an in-memory model of versioned nodes over random
 * histories of puts, deletes, reads and listings, each history under a fresh
 * folder: every result (new version, BAD_VERSION, value, child list) must be
 * the model's.
 */
export function storeAgreesWithModel(context: () => { store: MetadataStore; root: string }): void {
  it('agrees with a model of versioned nodes over random histories', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const { store, root } = context();
        const base = `${root}/model-${run++}`;
        const model = new Map<string, { version: number; value: number }>();
        for (const s of steps) {
          const path = `${base}/${NODES[s.node]}`;
          const current = model.get(path);
          const expected = await applyToModel(model, path, s, current);
          const actual = await applyToStore(store, path, base, s, current);
          expect(actual).toEqual(expected);
        }
      }),
      { numRuns: 15 },
    );
  }, 60_000);
}

function expectedVersion(s: Step, current: { version: number } | undefined): number | 'absent' | undefined {
  if (s.expect === 'none') return undefined;
  if (s.expect === 'absent') return s.kind === 'delete' ? undefined : 'absent';
  if (s.expect === 'current') return current?.version ?? 1;
  return (current?.version ?? 0) + 7;
}

async function applyToStore(
  store: MetadataStore,
  path: string,
  base: string,
  s: Step,
  current: { version: number } | undefined,
): Promise<Outcome> {
  const expected = expectedVersion(s, current);
  switch (s.kind) {
    case 'put':
      return outcome(() => store.put(path, Uint8Array.of(s.value), { expectedVersion: expected }));
    case 'delete':
      return outcome(() => store.delete(path, { expectedVersion: expected as number | undefined }));
    case 'get':
      return outcome(async () => {
        const node = await store.get(path);
        return node === undefined ? 'absent' : { version: node.version, value: node.value[0] };
      });
    case 'children':
      return outcome(async () => (await store.children(base)).names);
  }
}

async function applyToModel(
  model: Map<string, { version: number; value: number }>,
  path: string,
  s: Step,
  current: { version: number; value: number } | undefined,
): Promise<Outcome> {
  const expected = expectedVersion(s, current);
  const conflict =
    (expected === 'absent' && current !== undefined) || (typeof expected === 'number' && current?.version !== expected);
  if ((s.kind === 'put' || s.kind === 'delete') && conflict) return { error: 'ABORTED/BAD_VERSION' };
  switch (s.kind) {
    case 'put': {
      const version = (current?.version ?? 0) + 1;
      model.set(path, { version, value: s.value });
      return { ok: version };
    }
    case 'delete':
      model.delete(path);
      return { ok: undefined };
    case 'get':
      return { ok: current === undefined ? 'absent' : { version: current.version, value: current.value } };
    case 'children': {
      const prefix = path.slice(0, path.length - (NODES[s.node] as string).length);
      const names = [...model.keys()]
        .map((p) => p.slice(prefix.length))
        .filter((name) => !name.includes('/'))
        .sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      return { ok: names };
    }
  }
}
