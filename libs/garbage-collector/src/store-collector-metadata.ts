import type { CollectorMetadata, FinishOutcome, StoredNode } from './collector-metadata.js';

/** The versioned-node calls of a MetadataStore the collector uses (structurally; no dependency on the store lib). */
export interface VersionedNodes {
  get(path: string): Promise<StoredNode | undefined>;
  put(path: string, value: Uint8Array, options?: { expectedVersion?: number | 'absent' }): Promise<number>;
  delete(path: string, options?: { expectedVersion?: number }): Promise<void>;
  children(path: string, options?: { after?: string; limit?: number }): Promise<{ names: string[]; next?: string }>;
}

/**
 * CollectorMetadata in the metadata service's own process (standalone mode,
 * tests): the store directly, and the service's finishTopicDeletion. A
 * cluster collector uses GrpcCollectorMetadata.
 */
export class InProcessCollectorMetadata implements CollectorMetadata {
  constructor(
    private readonly nodes: VersionedNodes,
    private readonly finish: (managedLedgerPath: string, expectedVersion: number) => Promise<FinishOutcome>,
  ) {}

  async get(path: string): Promise<StoredNode | undefined> {
    const node = await this.nodes.get(path);
    return node === undefined ? undefined : { value: node.value, version: node.version };
  }

  put(path: string, value: Uint8Array, expectedVersion?: number | 'absent'): Promise<number> {
    return this.nodes.put(path, value, expectedVersion === undefined ? {} : { expectedVersion });
  }

  delete(path: string, expectedVersion?: number): Promise<void> {
    return this.nodes.delete(path, expectedVersion === undefined ? {} : { expectedVersion });
  }

  children(path: string, after?: string, limit?: number): Promise<{ names: string[]; next?: string }> {
    return this.nodes.children(path, {
      ...(after === undefined ? {} : { after }),
      ...(limit === undefined ? {} : { limit }),
    });
  }

  finishTopicDeletion(managedLedgerPath: string, expectedVersion: number): Promise<FinishOutcome> {
    return this.finish(managedLedgerPath, expectedVersion);
  }
}
