import type {
  ChildrenOptions,
  ChildrenPage,
  DeleteOptions,
  MetadataSession,
  MetadataStore,
  PutOptions,
  VersionedValue,
} from '@ledgerline/metadata-store';
import { LedgerlineError, ErrorReason } from '@ledgerline/errors';

interface Node {
  value: Uint8Array;
  version: number;
  createdAtMs: number;
  modifiedAtMs: number;
}

function badVersion(path: string): LedgerlineError {
  return new LedgerlineError('ABORTED', ErrorReason.BAD_VERSION, `the version of ${path} changed`);
}

/**
 * A MetadataStore in a Map, for this package's unit tests: versions,
 * compare-and-set, paged children and id sequences behave like the real
 * backends. `failPuts` makes the next puts fail with UNAVAILABLE, and
 * `putCount` counts writes.
 */
export class InMemoryMetadataStore implements MetadataStore {
  private readonly nodes = new Map<string, Node>();
  private readonly sequences = new Map<string, number>();
  putCount = 0;
  failPuts = 0;

  async get(path: string): Promise<VersionedValue | undefined> {
    const node = this.nodes.get(path);
    return node === undefined ? undefined : { ...node, value: node.value.slice() };
  }

  async exists(path: string): Promise<boolean> {
    return this.nodes.has(path);
  }

  async put(path: string, value: Uint8Array, options: PutOptions = {}): Promise<number> {
    if (this.failPuts > 0) {
      this.failPuts--;
      throw new LedgerlineError('UNAVAILABLE', ErrorReason.STORE_UNAVAILABLE, 'injected metadata failure');
    }
    const existing = this.nodes.get(path);
    const expected = options.expectedVersion;
    if (expected === 'absent' && existing !== undefined) throw badVersion(path);
    if (typeof expected === 'number' && existing?.version !== expected) throw badVersion(path);
    const now = Date.now();
    const version = (existing?.version ?? 0) + 1;
    this.nodes.set(path, {
      value: value.slice(),
      version,
      createdAtMs: existing?.createdAtMs ?? now,
      modifiedAtMs: now,
    });
    this.putCount++;
    return version;
  }

  async delete(path: string, options: DeleteOptions = {}): Promise<void> {
    const existing = this.nodes.get(path);
    if (options.expectedVersion !== undefined && existing?.version !== options.expectedVersion) throw badVersion(path);
    this.nodes.delete(path);
  }

  async children(path: string, options: ChildrenOptions = {}): Promise<ChildrenPage> {
    const prefix = `${path}/`;
    const names = [...this.nodes.keys()]
      .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/'))
      .map((p) => p.slice(prefix.length))
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
      .filter((n) => options.after === undefined || Buffer.compare(Buffer.from(n), Buffer.from(options.after)) > 0);
    const limit = options.limit ?? 1000;
    const page = names.slice(0, limit);
    const last = page[page.length - 1];
    return names.length > limit && last !== undefined ? { names: page, next: last } : { names: page };
  }

  async openSession(options: { ttlMs: number }): Promise<MetadataSession> {
    let expired = false;
    return {
      id: `session-${Math.random().toString(36).slice(2)}`,
      ttlMs: options.ttlMs,
      get expired() {
        return expired;
      },
      // This store never lets a session lapse, so it never needs renewing.
      renewals: 0,
      onExpired: () => undefined,
      close: async () => {
        expired = true;
      },
    };
  }

  async nextId(sequence: string): Promise<number> {
    const next = (this.sequences.get(sequence) ?? 0) + 1;
    this.sequences.set(sequence, next);
    return next;
  }

  async close(): Promise<void> {}

  /** Every path under a prefix, for assertions. */
  paths(prefix = '/'): string[] {
    return [...this.nodes.keys()].filter((p) => p.startsWith(prefix)).sort();
  }
}
