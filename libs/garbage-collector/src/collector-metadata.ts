import type { Channel } from '@grpc/grpc-js';
import { AdminService, FinishTopicDeletionOutcome, MetadataStoreService } from '@ledgerline/proto';
import { LedgerlineError } from '@ledgerline/errors';
import { CollectorReason } from './errors.js';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';

export interface StoredNode {
  value: Uint8Array;
  version: number;
}

export type FinishOutcome = 'removed' | 'changed' | 'missing';

/**
 * What the collector needs from metadata, all of it over the metadata
 * service's gRPC API in a cluster: versioned nodes (MetadataStoreService)
 * and the last step of a topic deletion (AdminService.FinishTopicDeletion),
 * which touches the service's own records.
 */
export interface CollectorMetadata {
  get(path: string): Promise<StoredNode | undefined>;
  /** expectedVersion: a number (compare-and-set), 'absent' (create only), or undefined (unconditional). */
  put(path: string, value: Uint8Array, expectedVersion?: number | 'absent'): Promise<number>;
  delete(path: string, expectedVersion?: number): Promise<void>;
  children(path: string, after?: string, limit?: number): Promise<{ names: string[]; next?: string }>;
  finishTopicDeletion(managedLedgerPath: string, expectedVersion: number): Promise<FinishOutcome>;
}

const OUTCOMES: Record<number, FinishOutcome> = {
  [FinishTopicDeletionOutcome.REMOVED]: 'removed',
  [FinishTopicDeletionOutcome.CHANGED]: 'changed',
  [FinishTopicDeletionOutcome.MISSING]: 'missing',
};

/** CollectorMetadata over the metadata service (cluster mode, and standalone over loopback). */
export class GrpcCollectorMetadata implements CollectorMetadata {
  constructor(
    private readonly store: Client<typeof MetadataStoreService>,
    private readonly admin: Client<typeof AdminService>,
    private readonly deadlineMs: number,
    private readonly channel?: Channel,
  ) {}

  /** Both clients over one channel to `address` (host:port). */
  static connect(address: string, deadlineMs: number, options: ClientOptions = {}): GrpcCollectorMetadata {
    const channel = createChannel(address, options);
    return new GrpcCollectorMetadata(
      createClient(MetadataStoreService, channel, options),
      createClient(AdminService, channel, options),
      deadlineMs,
      channel,
    );
  }

  async get(path: string): Promise<StoredNode | undefined> {
    const { node } = await this.store.get({ path }, this.options());
    return node === undefined ? undefined : { value: node.value, version: Number(node.version) };
  }

  async put(path: string, value: Uint8Array, expectedVersion?: number | 'absent'): Promise<number> {
    const expected =
      expectedVersion === undefined
        ? { case: undefined }
        : expectedVersion === 'absent'
          ? { case: 'expectAbsent' as const, value: true }
          : { case: 'expectedVersion' as const, value: BigInt(expectedVersion) };
    const response = await this.store.put({ path, value, expected }, this.options());
    return Number(response.version);
  }

  async delete(path: string, expectedVersion?: number): Promise<void> {
    const expected = expectedVersion === undefined ? {} : { expectedVersion: BigInt(expectedVersion) };
    await this.store.delete({ path, ...expected }, this.options());
  }

  async children(path: string, after?: string, limit?: number): Promise<{ names: string[]; next?: string }> {
    const response = await this.store.children({ path, pageToken: after ?? '', pageSize: limit ?? 0 }, this.options());
    return response.nextPageToken === ''
      ? { names: response.names }
      : { names: response.names, next: response.nextPageToken };
  }

  async finishTopicDeletion(managedLedgerPath: string, expectedVersion: number): Promise<FinishOutcome> {
    const response = await this.admin.finishTopicDeletion(
      { managedLedgerPath, expectedVersion: BigInt(expectedVersion) },
      this.options(),
    );
    const outcome = OUTCOMES[response.outcome];
    if (outcome === undefined) {
      throw new LedgerlineError(
        'INTERNAL',
        CollectorReason.UNKNOWN_FINISH_OUTCOME,
        `FinishTopicDeletion answered outcome ${response.outcome}`,
      );
    }
    return outcome;
  }

  close(): void {
    closeClient(this.store);
    closeClient(this.admin);
    this.channel?.close();
  }

  /**
   * Resolves once the metadata service answers, waiting up to the deadline
   * for it to come up (pods starting together) instead of failing at once.
   */
  async reachable(): Promise<void> {
    try {
      await this.store.get({ path: '/' }, { deadlineMs: this.deadlineMs, waitForReady: true });
    } catch (thrown) {
      // Any answer (a refusal included) says the service is up; what it refuses shows in the calls that matter.
      const error = LedgerlineError.from(thrown);
      if (error.code === 'UNAVAILABLE' || error.code === 'DEADLINE_EXCEEDED') throw error;
    }
  }

  private options(): { deadlineMs: number } {
    return { deadlineMs: this.deadlineMs };
  }
}

/** Counts the reads a pass makes (gets and listings), the figure that must be O(pending), not O(topics). */
export class CountingMetadata implements CollectorMetadata {
  reads = 0;
  constructor(private readonly inner: CollectorMetadata) {}
  get(path: string) {
    this.reads++;
    return this.inner.get(path);
  }
  put(path: string, value: Uint8Array, expectedVersion?: number | 'absent') {
    return this.inner.put(path, value, expectedVersion);
  }
  delete(path: string, expectedVersion?: number) {
    return this.inner.delete(path, expectedVersion);
  }
  children(path: string, after?: string, limit?: number) {
    this.reads++;
    return this.inner.children(path, after, limit);
  }
  finishTopicDeletion(managedLedgerPath: string, expectedVersion: number) {
    return this.inner.finishTopicDeletion(managedLedgerPath, expectedVersion);
  }
}
