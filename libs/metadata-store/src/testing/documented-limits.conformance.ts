import type { CodeName } from '@ledgerline/errors';
import type { MetadataStoreBackend } from './metadata-store-backend.js';
import {
  DEFAULT_MAX_VALUE_BYTES,
  MAX_CHILDREN_PAGE,
  MAX_OPEN_SESSIONS,
  MAX_PATH_BYTES,
  MAX_SEQUENCE_NAME_BYTES,
  MAX_SESSION_TTL_MS,
  MAX_VALUE_BYTES,
  MIN_SESSION_TTL_MS,
  type MetadataStore,
} from '../store.js';

/**
 * How many calls the bulk helpers keep in flight. Each Redis command's
 * deadline (commandTimeoutMs) starts when it is sent, so with a thousand sent
 * at once the last ones spent the deadline queued behind the others and a
 * busy machine failed them with "Command timed out"; a hundred keep the queue
 * short while still pipelining.
 */
export const BULK_CALLS_IN_FLIGHT = 100;

interface LimitCase {
  limit: string;
  /** A call right at the documented limit: it must succeed. */
  atLimit: (store: MetadataStore, root: string) => Promise<unknown>;
  /** The same call one step past it. */
  pastLimit: (store: MetadataStore, root: string) => Promise<unknown>;
  code: CodeName;
  reason: string;
}

/** A path under `root` of exactly `bytes` UTF-8 bytes, its last segment made of `unit`. */
function pathOfBytes(root: string, bytes: number, unit: string): string {
  const unitBytes = Buffer.byteLength(unit);
  const fill = bytes - Buffer.byteLength(`${root}/`);
  return `${root}/${unit.repeat(Math.floor(fill / unitBytes))}${'a'.repeat(fill % unitBytes)}`;
}

const one = Uint8Array.of(1);

/** The README's limits at their default values, each with the code and reason it documents. */
const DOCUMENTED_LIMITS: LimitCase[] = [
  {
    limit: `paths of ${MAX_PATH_BYTES} bytes`,
    atLimit: (store, root) => store.put(pathOfBytes(root, MAX_PATH_BYTES, 'a'), one),
    pastLimit: (store, root) => store.put(pathOfBytes(root, MAX_PATH_BYTES + 1, 'a'), one),
    code: 'INVALID_ARGUMENT',
    reason: 'PATH_TOO_LONG',
  },
  {
    limit: `paths of ${MAX_PATH_BYTES} bytes, counted in UTF-8`,
    atLimit: (store, root) => store.get(pathOfBytes(root, MAX_PATH_BYTES, 'é')),
    pastLimit: (store, root) => store.get(pathOfBytes(root, MAX_PATH_BYTES + 1, 'é')),
    code: 'INVALID_ARGUMENT',
    reason: 'PATH_TOO_LONG',
  },
  {
    limit: `values of ${DEFAULT_MAX_VALUE_BYTES} bytes by default`,
    atLimit: (store, root) => store.put(`${root}/large`, new Uint8Array(DEFAULT_MAX_VALUE_BYTES)),
    pastLimit: (store, root) => store.put(`${root}/larger`, new Uint8Array(DEFAULT_MAX_VALUE_BYTES + 1)),
    code: 'RESOURCE_EXHAUSTED',
    reason: 'VALUE_TOO_LARGE',
  },
  {
    limit: `pages of at most ${MAX_CHILDREN_PAGE}`,
    atLimit: (store, root) => store.children(root, { limit: MAX_CHILDREN_PAGE }),
    pastLimit: (store, root) => store.children(root, { limit: MAX_CHILDREN_PAGE + 1 }),
    code: 'INVALID_ARGUMENT',
    reason: 'BAD_PAGE_SIZE',
  },
  {
    limit: 'pages of at least 1',
    atLimit: (store, root) => store.children(root, { limit: 1 }),
    pastLimit: (store, root) => store.children(root, { limit: 0 }),
    code: 'INVALID_ARGUMENT',
    reason: 'BAD_PAGE_SIZE',
  },
  {
    limit: `sequence names of ${MAX_SEQUENCE_NAME_BYTES} bytes`,
    atLimit: (store) => store.nextId('s'.repeat(MAX_SEQUENCE_NAME_BYTES)),
    pastLimit: (store) => store.nextId('s'.repeat(MAX_SEQUENCE_NAME_BYTES + 1)),
    code: 'INVALID_ARGUMENT',
    reason: 'BAD_SEQUENCE_NAME',
  },
  {
    limit: `session TTLs from ${MIN_SESSION_TTL_MS} ms`,
    atLimit: async (store) => (await store.openSession({ ttlMs: MIN_SESSION_TTL_MS })).close(),
    pastLimit: (store) => store.openSession({ ttlMs: MIN_SESSION_TTL_MS - 1 }),
    code: 'INVALID_ARGUMENT',
    reason: 'BAD_SESSION_TTL',
  },
  {
    limit: `session TTLs up to ${MAX_SESSION_TTL_MS} ms`,
    atLimit: async (store) => (await store.openSession({ ttlMs: MAX_SESSION_TTL_MS })).close(),
    pastLimit: (store) => store.openSession({ ttlMs: MAX_SESSION_TTL_MS + 1 }),
    code: 'INVALID_ARGUMENT',
    reason: 'BAD_SESSION_TTL',
  },
];

/** Part of the conformance suite: every limit the README documents, enforced with its code and reason. */
export function documentedLimitsAreEnforced(context: () => { backend: MetadataStoreBackend; root: string }): void {
  it.each(DOCUMENTED_LIMITS.map((c) => [c.limit, c] as const))(
    'enforces the documented limit: %s',
    async (_, limitCase) => {
      const { backend, root } = context();
      const store = await backend.open();
      try {
        await limitCase.atLimit(store, `${root}/limits`);
        await expect(limitCase.pastLimit(store, `${root}/limits`)).rejects.toMatchObject({
          code: limitCase.code,
          reason: limitCase.reason,
        });
      } finally {
        await store.close();
      }
    },
  );

  it(`holds at most ${MAX_OPEN_SESSIONS} open sessions per client`, async () => {
    const store = await context().backend.open();
    try {
      const opened = [];
      // In batches, so the test stays gentle on the store; the TTL is long, so no renewal runs meanwhile.
      for (let batch = 0; batch < MAX_OPEN_SESSIONS / BULK_CALLS_IN_FLIGHT; batch++) {
        opened.push(
          ...(await Promise.all(
            Array.from({ length: BULK_CALLS_IN_FLIGHT }, () => store.openSession({ ttlMs: 60_000 })),
          )),
        );
      }
      await expect(store.openSession({ ttlMs: 60_000 })).rejects.toMatchObject({
        code: 'RESOURCE_EXHAUSTED',
        reason: 'TOO_MANY_SESSIONS',
      });
      await opened[0]!.close();
      await (await store.openSession({ ttlMs: 60_000 })).close();
    } finally {
      await store.close();
    }
  }, 60_000);

  it(`accepts maxValueBytes up to ${MAX_VALUE_BYTES} and refuses more`, async () => {
    const { backend } = context();
    await (await backend.open({ maxValueBytes: MAX_VALUE_BYTES })).close();
    await expect(backend.open({ maxValueBytes: MAX_VALUE_BYTES + 1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      reason: 'INVALID_CONFIG',
    });
  });
}
