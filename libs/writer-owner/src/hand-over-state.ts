import { create } from '@bufbuild/protobuf';
import type { HandOverState } from '@ledgerline/managed-ledger';
import { HandedOverStateSchema, type HandedOverState } from '@ledgerline/proto';

/**
 * What a transfer's LoadTopic carries of the source's close (see
 * hand-over-state.ts of @ledgerline/managed-ledger): ManagedLedgerInfo and
 * the cursor nodes with their versions.
 */
export function handOverStateToProto(state: HandOverState): HandedOverState {
  return create(HandedOverStateSchema, {
    info: state.info.value,
    version: BigInt(state.info.version),
    cursors: state.cursors.flatMap((cursor) =>
      cursor.node === undefined
        ? []
        : [{ name: cursor.name, info: cursor.node.value, version: BigInt(cursor.node.version) }],
    ),
  });
}

/**
 * The state a LoadTopic carried, or undefined without one (or with a cursor
 * without its node: the load then reads the nodes). Versions beyond what a
 * number holds come out as -1, which the open refuses as well; everything
 * else the managed ledger checks before using it.
 */
export function handOverStateFromProto(state: HandedOverState | undefined): HandOverState | undefined {
  if (state?.info === undefined || state.cursors.some((cursor) => cursor.info === undefined)) return undefined;
  const version = (value: bigint): number => (value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : -1);
  return {
    info: { value: state.info, version: version(state.version) },
    cursors: state.cursors.map((cursor) => ({
      name: cursor.name,
      node: { value: cursor.info!, version: version(cursor.version) },
    })),
  };
}
