import type { ChildrenOptions, ChildrenPage, ExpectedVersion } from '@ledgerline/metadata-store';
import type { MetadataStoreService } from '@ledgerline/proto';
import type { Client } from '@ledgerline/rpc';
import type { MetadataNodes } from './node-managed-ledger-metadata.js';
import { int64ToNumber } from '@ledgerline/ledger-info';

/**
 * The metadata service's MetadataStoreService as MetadataNodes. The service
 * keeps the store's versions, so compare-and-set and BAD_VERSION mean exactly
 * what they mean in-process; its page token is passed through as `after`/`next`.
 */
export class GrpcMetadataNodes implements MetadataNodes {
  constructor(
    private readonly client: Client<typeof MetadataStoreService>,
    private readonly deadlineMs: number,
  ) {}

  async get(path: string): Promise<{ value: Uint8Array; version: number } | undefined> {
    const { node } = await this.client.get({ path }, this.callOptions());
    if (node === undefined) return undefined;
    return { value: node.value, version: int64ToNumber(node.version, 'node version') };
  }

  async put(path: string, value: Uint8Array, options: { expectedVersion?: ExpectedVersion }): Promise<number> {
    const expected =
      options.expectedVersion === undefined
        ? { case: undefined }
        : options.expectedVersion === 'absent'
          ? { case: 'expectAbsent' as const, value: true }
          : { case: 'expectedVersion' as const, value: BigInt(options.expectedVersion) };
    const response = await this.client.put({ path, value, expected }, this.callOptions());
    return int64ToNumber(response.version, 'node version');
  }

  async delete(path: string, options: { expectedVersion?: number }): Promise<void> {
    const expected = options.expectedVersion === undefined ? {} : { expectedVersion: BigInt(options.expectedVersion) };
    await this.client.delete({ path, ...expected }, this.callOptions());
  }

  async children(path: string, options: ChildrenOptions): Promise<ChildrenPage> {
    const response = await this.client.children(
      { path, pageToken: options.after ?? '', pageSize: options.limit ?? 0 },
      this.callOptions(),
    );
    return response.nextPageToken === ''
      ? { names: response.names }
      : { names: response.names, next: response.nextPageToken };
  }

  private callOptions(): { deadlineMs: number } {
    return { deadlineMs: this.deadlineMs };
  }
}
