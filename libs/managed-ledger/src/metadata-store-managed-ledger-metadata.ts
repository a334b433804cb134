import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import type { MetadataStore } from '@ledgerline/metadata-store';
import {
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  type ManagedCursorInfo,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import { cursorNameFromNode, cursorPath } from './cursor-name.js';
import { corruptInfoError } from './errors.js';
import {
  LEDGER_ID_SEQUENCE,
  type CursorNamePage,
  type ExpectedVersion,
  type ManagedLedgerMetadata,
  type Versioned,
} from './metadata-access.js';

/** The cursor listing page size when the caller names none. */
const DEFAULT_CURSOR_PAGE = 1_000;

/**
 * ManagedLedgerMetadata over a MetadataStore: used in-process by the metadata
 * service, in standalone mode and in tests. Values are the proto2 bytes of
 * ManagedLedgerInfo / ManagedCursorInfo, so they decode in Pulsar too.
 */
export class MetadataStoreManagedLedgerMetadata implements ManagedLedgerMetadata {
  constructor(private readonly store: MetadataStore) {}

  async getManagedLedgerInfo(path: string): Promise<Versioned<ManagedLedgerInfo> | undefined> {
    return this.getDecoded(path, ManagedLedgerInfoSchema, 'ManagedLedgerInfo');
  }

  putManagedLedgerInfo(path: string, info: ManagedLedgerInfo, expectedVersion: ExpectedVersion): Promise<number> {
    return this.store.put(path, toBinary(ManagedLedgerInfoSchema, info), { expectedVersion });
  }

  deleteManagedLedgerInfo(path: string, expectedVersion: number): Promise<void> {
    return this.store.delete(path, { expectedVersion });
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
    return this.store.put(cursorPath(path, cursorName), toBinary(ManagedCursorInfoSchema, info), { expectedVersion });
  }

  deleteCursorInfo(path: string, cursorName: string, expectedVersion?: number): Promise<void> {
    const options = expectedVersion === undefined ? {} : { expectedVersion };
    return this.store.delete(cursorPath(path, cursorName), options);
  }

  /** The page token is the last node name of the page (encoded), as the store's `after` takes it. */
  async listCursors(path: string, options: { pageToken?: string; limit?: number } = {}): Promise<CursorNamePage> {
    const page = await this.store.children(path, {
      ...(options.pageToken === undefined ? {} : { after: options.pageToken }),
      limit: options.limit ?? DEFAULT_CURSOR_PAGE,
    });
    const names = page.names.map(cursorNameFromNode);
    return page.next === undefined ? { names } : { names, nextPageToken: page.next };
  }

  allocateLedgerId(): Promise<number> {
    return this.store.nextId(LEDGER_ID_SEQUENCE);
  }

  private async getDecoded<Desc extends DescMessage>(
    path: string,
    schema: Desc,
    what: string,
  ): Promise<Versioned<MessageShape<Desc>> | undefined> {
    const node = await this.store.get(path);
    if (node === undefined) return undefined;
    try {
      return { value: fromBinary(schema, node.value), version: node.version };
    } catch (err) {
      throw corruptInfoError(`${what} at ${path}`, err);
    }
  }
}
