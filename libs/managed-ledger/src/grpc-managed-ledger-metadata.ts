import { fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import {
  LookupService,
  ManagedCursorInfoSchema,
  ManagedLedgerInfoSchema,
  MetadataStoreService,
  type ManagedCursorInfo,
  type ManagedLedgerInfo,
} from '@ledgerline/proto';
import type { Channel } from '@grpc/grpc-js';
import { closeClient, createChannel, createClient, type Client, type ClientOptions } from '@ledgerline/rpc';
import { cursorNameFromNode, cursorPath } from './cursor-name.js';
import { corruptInfoError } from './errors.js';
import type { CursorNamePage, ExpectedVersion, ManagedLedgerMetadata, Versioned } from './metadata-access.js';
import { int64ToNumber } from './position.js';

/** Cursor names listed per call when the caller names no page size. */
const DEFAULT_CURSOR_PAGE = 1_000;
/** Each metadata call fails with DEADLINE_EXCEEDED after this long unless the options say otherwise. */
const DEFAULT_DEADLINE_MS = 10_000;

/**
 * ManagedLedgerMetadata over the metadata service's gRPC API (cluster mode):
 * MetadataStoreService for the nodes, LookupService.AllocateLedgerId for
 * ledger ids. The service keeps the same versions, so compare-and-set and
 * BAD_VERSION mean exactly what they mean in-process.
 */
export class GrpcManagedLedgerMetadata implements ManagedLedgerMetadata {
  private readonly deadlineMs: number;
  private readonly channel: Channel | undefined;

  constructor(
    private readonly store: Client<typeof MetadataStoreService>,
    private readonly lookup: Client<typeof LookupService>,
    options: { deadlineMs?: number; channel?: Channel } = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.channel = options.channel;
  }

  /** Clients for both services over one channel to `address` (host:port). */
  static connect(address: string, options: ClientOptions & { deadlineMs?: number } = {}): GrpcManagedLedgerMetadata {
    const channel = createChannel(address, options);
    return new GrpcManagedLedgerMetadata(
      createClient(MetadataStoreService, channel, options),
      createClient(LookupService, channel, options),
      { ...options, channel },
    );
  }

  /** Closes both clients, and the channel when connect() opened it. */
  close(): void {
    closeClient(this.store);
    closeClient(this.lookup);
    this.channel?.close();
  }

  getManagedLedgerInfo(path: string): Promise<Versioned<ManagedLedgerInfo> | undefined> {
    return this.getDecoded(path, ManagedLedgerInfoSchema, 'ManagedLedgerInfo');
  }

  putManagedLedgerInfo(path: string, info: ManagedLedgerInfo, expectedVersion: ExpectedVersion): Promise<number> {
    return this.put(path, toBinary(ManagedLedgerInfoSchema, info), expectedVersion);
  }

  async deleteManagedLedgerInfo(path: string, expectedVersion: number): Promise<void> {
    await this.store.delete({ path, expectedVersion: BigInt(expectedVersion) }, this.callOptions());
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
    return this.put(cursorPath(path, cursorName), toBinary(ManagedCursorInfoSchema, info), expectedVersion);
  }

  async deleteCursorInfo(path: string, cursorName: string, expectedVersion?: number): Promise<void> {
    const request = {
      path: cursorPath(path, cursorName),
      ...(expectedVersion === undefined ? {} : { expectedVersion: BigInt(expectedVersion) }),
    };
    await this.store.delete(request, this.callOptions());
  }

  async listCursors(path: string, options: { pageToken?: string; limit?: number } = {}): Promise<CursorNamePage> {
    const response = await this.store.children(
      { path, pageToken: options.pageToken ?? '', pageSize: options.limit ?? DEFAULT_CURSOR_PAGE },
      this.callOptions(),
    );
    const names = response.names.map(cursorNameFromNode);
    return response.nextPageToken === '' ? { names } : { names, nextPageToken: response.nextPageToken };
  }

  async allocateLedgerId(): Promise<number> {
    const response = await this.lookup.allocateLedgerId({}, this.callOptions());
    return int64ToNumber(response.ledgerId, 'allocated ledger id');
  }

  private async put(path: string, value: Uint8Array, expectedVersion: ExpectedVersion): Promise<number> {
    const expected =
      expectedVersion === 'absent'
        ? { case: 'expectAbsent' as const, value: true }
        : { case: 'expectedVersion' as const, value: BigInt(expectedVersion) };
    const response = await this.store.put({ path, value, expected }, this.callOptions());
    return int64ToNumber(response.version, 'node version');
  }

  private async getDecoded<Desc extends DescMessage>(
    path: string,
    schema: Desc,
    what: string,
  ): Promise<Versioned<MessageShape<Desc>> | undefined> {
    const response = await this.store.get({ path }, this.callOptions());
    if (response.node === undefined) return undefined;
    try {
      return {
        value: fromBinary(schema, response.node.value),
        version: int64ToNumber(response.node.version, 'node version'),
      };
    } catch (err) {
      throw corruptInfoError(`${what} at ${path}`, err);
    }
  }

  private callOptions() {
    return { deadlineMs: this.deadlineMs };
  }
}
