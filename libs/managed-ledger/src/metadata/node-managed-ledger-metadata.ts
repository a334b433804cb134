import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import type { ChildrenOptions, ChildrenPage, ExpectedVersion, Versioned } from '@ledgerline/metadata-store';
import {
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  type ManagedCursorInfo,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import { cursorNameFromNode, cursorPath } from './cursor-name.js';
import { corruptInfoError } from '../errors.js';
import { encodePendingDeletionEntry, pendingDeletionEntryPath } from '@ledgerline/ledger-info';
import type { CursorNamePage, ManagedLedgerMetadata } from './metadata-access.js';

/** The cursor listing page size when the caller names none. */
const DEFAULT_CURSOR_PAGE = 1_000;

/**
 * The versioned nodes a managed ledger's metadata lives in: what a
 * MetadataStore offers in-process and what the metadata service's
 * MetadataStoreService offers over gRPC.
 */
export interface MetadataNodes {
  get(path: string): Promise<{ value: Uint8Array; version: number } | undefined>;
  put(path: string, value: Uint8Array, options: { expectedVersion?: ExpectedVersion }): Promise<number>;
  delete(path: string, options: { expectedVersion?: number }): Promise<void>;
  children(path: string, options: ChildrenOptions): Promise<ChildrenPage>;
}

/**
 * ManagedLedgerMetadata over versioned nodes. Values are the proto2 bytes of
 * ManagedLedgerInfo / ManagedCursorInfo, so they decode in Pulsar too;
 * cursors are the children of the managed-ledger node, as in Pulsar.
 */
export class NodeManagedLedgerMetadata implements ManagedLedgerMetadata {
  constructor(
    private readonly nodes: MetadataNodes,
    private readonly nextLedgerId: () => Promise<number>,
  ) {}

  getManagedLedgerInfo(path: string): Promise<Versioned<ManagedLedgerInfo> | undefined> {
    return this.getDecoded(path, ManagedLedgerInfoSchema, 'ManagedLedgerInfo');
  }

  /**
   * A value with deletable markers is indexed first (ledger-info's pending-deletions-index.ts):
   * the index entry is written before the markers, so no marker is ever unindexed.
   */
  async putManagedLedgerInfo(path: string, info: ManagedLedgerInfo, expectedVersion: ExpectedVersion): Promise<number> {
    if (info.deletableLedgers.length > 0) {
      const entry = encodePendingDeletionEntry({ managedLedgerPath: path, indexedAtMs: Date.now() });
      await this.nodes.put(pendingDeletionEntryPath(path), entry, {});
    }
    return this.nodes.put(path, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion });
  }

  deleteManagedLedgerInfo(path: string, expectedVersion: number): Promise<void> {
    return this.nodes.delete(path, { expectedVersion });
  }

  getCursorInfo(path: string, cursorName: string): Promise<Versioned<ManagedCursorInfo> | undefined> {
    return this.getDecoded(cursorPath(path, cursorName), ManagedCursorInfoSchema, 'ManagedCursorInfo');
  }

  putCursorInfo(
    path: string,
    cursorName: string,
    info: ManagedCursorInfo,
    expectedVersion: ExpectedVersion,
  ): Promise<number> {
    return this.nodes.put(cursorPath(path, cursorName), toBinary(ManagedCursorInfoSchema, info), { expectedVersion });
  }

  deleteCursorInfo(path: string, cursorName: string, expectedVersion?: number): Promise<void> {
    return this.nodes.delete(cursorPath(path, cursorName), expectedVersion === undefined ? {} : { expectedVersion });
  }

  /** The page token is the nodes' own continuation (the last encoded name of the page). */
  async listCursors(path: string, options: { pageToken?: string; limit?: number } = {}): Promise<CursorNamePage> {
    const page = await this.nodes.children(path, {
      ...(options.pageToken === undefined ? {} : { after: options.pageToken }),
      limit: options.limit ?? DEFAULT_CURSOR_PAGE,
    });
    const names = page.names.map(cursorNameFromNode);
    return page.next === undefined ? { names } : { names, nextPageToken: page.next };
  }

  allocateLedgerId(): Promise<number> {
    return this.nextLedgerId();
  }

  private async getDecoded<Desc extends DescMessage>(
    path: string,
    schema: Desc,
    what: string,
  ): Promise<Versioned<MessageShape<Desc>> | undefined> {
    const node = await this.nodes.get(path);
    if (node === undefined) return undefined;
    try {
      return { value: fromBinary(schema, node.value), version: node.version };
    } catch (err) {
      throw corruptInfoError(`${what} at ${path}`, err);
    }
  }
}
