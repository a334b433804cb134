import type { ExpectedVersion } from '@ledgerline/metadata-store';
import { type Position } from '@ledgerline/cursor-codec';
import { create, equals, isFieldSet } from '@bufbuild/protobuf';
import {
  LongPropertySchema,
  ManagedCursorInfoSchema,
  StringPropertySchema,
  type ManagedCursorInfo,
} from '@ledgerline/proto';
import { isBadVersion } from '../errors.js';
import type { ManagedLedgerMetadata } from '../metadata/metadata-access.js';
import { int64ToNumber } from '@ledgerline/ledger-info';

/** Cursor ledger id meaning "the state lives in this node" (Pulsar's -1). */
export const NO_CURSOR_LEDGER = -1;

/** What a cursor node says, as this lib works with it. */
export interface CursorInfoModel {
  cursorsLedgerId: number;
  markDelete: Position;
  properties: Map<string, bigint | number>;
  cursorProperties: Map<string, string>;
  lastActiveMs: number;
  /** A whole encoded cursor state kept in the node (small states, no cursor ledger). */
  inlineSnapshot?: Uint8Array;
  resetEpoch: number;
}

export function cursorInfoToProto(model: CursorInfoModel): ManagedCursorInfo {
  return create(ManagedCursorInfoSchema, {
    cursorsLedgerId: BigInt(model.cursorsLedgerId),
    markDeleteLedgerId: BigInt(model.markDelete.ledgerId),
    markDeleteEntryId: BigInt(model.markDelete.entryId),
    properties: [...model.properties].map(([name, value]) =>
      create(LongPropertySchema, { name, value: BigInt(value) }),
    ),
    lastActive: BigInt(model.lastActiveMs),
    cursorProperties: [...model.cursorProperties].map(([name, value]) => create(StringPropertySchema, { name, value })),
    ...(model.inlineSnapshot === undefined ? {} : { inlineSnapshot: model.inlineSnapshot }),
    resetEpoch: BigInt(model.resetEpoch),
  });
}

export function cursorInfoFromProto(proto: ManagedCursorInfo): CursorInfoModel {
  const model: CursorInfoModel = {
    cursorsLedgerId: int64ToNumber(proto.cursorsLedgerId, 'cursorsLedgerId'),
    markDelete: {
      ledgerId: int64ToNumber(proto.markDeleteLedgerId, 'markDeleteLedgerId'),
      entryId: int64ToNumber(proto.markDeleteEntryId, 'markDeleteEntryId'),
    },
    properties: new Map(proto.properties.map((p) => [p.name, p.value])),
    cursorProperties: new Map(proto.cursorProperties.map((p) => [p.name, p.value])),
    lastActiveMs: int64ToNumber(proto.lastActive, 'lastActive'),
    resetEpoch: int64ToNumber(proto.resetEpoch, 'resetEpoch'),
  };
  if (isFieldSet(proto, ManagedCursorInfoSchema.field.inlineSnapshot)) model.inlineSnapshot = proto.inlineSnapshot;
  return model;
}

/**
 * A cursor node and the version last read or written. Every write is a
 * compare-and-set on that version; a conflict means another owner (the
 * caller fences). A write that failed without an answer is checked by
 * re-reading before the next write, like InfoKeeper does.
 */
export class CursorInfoKeeper {
  private uncertain: ManagedCursorInfo | undefined;

  constructor(
    private readonly metadata: ManagedLedgerMetadata,
    private readonly path: string,
    readonly cursorName: string,
    private version: ExpectedVersion,
    private model: CursorInfoModel,
  ) {}

  get current(): CursorInfoModel {
    return this.model;
  }

  get currentVersion(): ExpectedVersion {
    return this.version;
  }

  /** False while a write's answer was lost: the node may hold it, one version past the one known. */
  get certain(): boolean {
    return this.uncertain === undefined;
  }

  /** Writes `next`; BAD_VERSION errors propagate for the caller to fence on. */
  async write(next: CursorInfoModel): Promise<void> {
    if (this.uncertain !== undefined) await this.settle(this.uncertain);
    const proto = cursorInfoToProto(next);
    try {
      this.version = await this.metadata.putCursorInfo(this.path, this.cursorName, proto, this.version);
    } catch (err) {
      if (!isBadVersion(err)) this.uncertain = proto;
      throw err;
    }
    this.model = next;
  }

  async delete(): Promise<void> {
    if (this.uncertain !== undefined) await this.settle(this.uncertain);
    await this.metadata.deleteCursorInfo(
      this.path,
      this.cursorName,
      typeof this.version === 'number' ? this.version : undefined,
    );
  }

  /** Adopts our earlier write if it landed; otherwise a write by someone else makes the next compare-and-set fail. */
  private async settle(written: ManagedCursorInfo): Promise<void> {
    const stored = await this.metadata.getCursorInfo(this.path, this.cursorName);
    this.uncertain = undefined;
    const expectedNext = this.version === 'absent' ? 1 : this.version + 1;
    if (
      stored !== undefined &&
      stored.version === expectedNext &&
      equals(ManagedCursorInfoSchema, stored.value, written)
    ) {
      this.version = stored.version;
      this.model = cursorInfoFromProto(written);
    }
  }
}
