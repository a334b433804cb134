import type { Versioned } from '@ledgerline/metadata-store';
import type { ManagedLedgerInfo } from '@ledgerline/proto';
import { infoFromProto, infoToProto, type ManagedLedgerInfoModel } from '@ledgerline/ledger-info';
import type { ManagedLedgerConfig } from './config.js';
import { cursorInfoFromProto } from './cursors/cursor-info.js';
import type { StoredCursor } from './cursors/cursor-registry.js';
import { validateCursorName } from './metadata/cursor-name.js';

/**
 * What an owner's close left in the metadata store: ManagedLedgerInfo and
 * every cursor node, each with its version. A transfer passes it to the next
 * owner, whose open starts from it instead of reading the nodes again. It is
 * a hint: the open's first write to ManagedLedgerInfo is a compare-and-set on
 * the version given, so a stale state (the node written since, by another
 * owner or the garbage collector) fails it and the open reads everything as
 * without it. While that version holds, no other owner opened the managed
 * ledger since the close, and cursor nodes are written only by the topic's
 * owner, so no cursor node was created or written meanwhile: the cursors are
 * recovered as handed over, without a claim each. An owner whose cursor write
 * lost its answer hands no state over (its versions may be one behind).
 */
export interface HandOverState {
  info: Versioned<ManagedLedgerInfo>;
  cursors: StoredCursor[];
}

/** The state a managed ledger's keepers hold: the nodes as it last wrote them (undefined if a cursor has none). */
export function handOverStateOf(
  keeper: { readonly info: Readonly<ManagedLedgerInfoModel>; readonly version: number },
  cursors: { storedNodes(): StoredCursor[] | undefined },
): HandOverState | undefined {
  const nodes = cursors.storedNodes();
  return nodes === undefined
    ? undefined
    : { info: { value: infoToProto(keeper.info), version: keeper.version }, cursors: nodes };
}

/** Whether `value` is a version a node can have. */
function isVersion(value: number): boolean {
  return Number.isSafeInteger(value) && value >= 0;
}

function decodes(decode: () => unknown): boolean {
  try {
    decode();
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a state another process sent can be opened from: versions that a
 * node can have, at most maxCursors cursors with valid, distinct names, and
 * nodes that decode. One that cannot is ignored (the open reads the nodes):
 * bad input from a peer never fails a load that reading would let succeed.
 */
export function usableHandOverState(state: HandOverState, config: ManagedLedgerConfig): boolean {
  if (!isVersion(state.info.version) || !decodes(() => infoFromProto(state.info.value))) return false;
  if (state.cursors.length > config.maxCursors) return false;
  const names = new Set<string>();
  for (const cursor of state.cursors) {
    if (!decodes(() => validateCursorName(cursor.name)) || names.has(cursor.name)) return false;
    names.add(cursor.name);
    const node = cursor.node;
    if (node === undefined) continue;
    if (!isVersion(node.version) || !decodes(() => cursorInfoFromProto(node.value))) return false;
  }
  return true;
}
