import type { MessageInitShape } from '@bufbuild/protobuf';
import type { AckSchema } from '@ledgerline/proto';
import type { Position } from './ack-memory.js';

type AckInit = MessageInitShape<typeof AckSchema>;

interface Range {
  readonly ledgerId: bigint;
  readonly firstEntryId: bigint;
  lastEntryId: bigint;
}

function compare(a: Position, b: Position): number {
  if (a.ledgerId !== b.ledgerId) return a.ledgerId < b.ledgerId ? -1 : 1;
  return a.entryId === b.entryId ? 0 : a.entryId < b.entryId ? -1 : 1;
}

/**
 * Runs of consecutive entries of one ledger, in order, duplicates merged: a
 * run of one entry stays a single position, longer runs become ranges.
 */
export function coalescePositions(positions: readonly Position[]): { positions: Position[]; ranges: Range[] } {
  const runs: Range[] = [];
  let current: Range | undefined;
  for (const p of [...positions].sort(compare)) {
    if (current !== undefined && current.ledgerId === p.ledgerId && p.entryId <= current.lastEntryId + 1n) {
      if (p.entryId > current.lastEntryId) current.lastEntryId = p.entryId;
      continue;
    }
    current = { ledgerId: p.ledgerId, firstEntryId: p.entryId, lastEntryId: p.entryId };
    runs.push(current);
  }
  const singles: Position[] = [];
  const ranges: Range[] = [];
  for (const run of runs) {
    if (run.firstEntryId === run.lastEntryId) singles.push({ ledgerId: run.ledgerId, entryId: run.firstEntryId });
    else ranges.push(run);
  }
  return { positions: singles, ranges };
}

/**
 * An Ack as it goes on a stream: with `acceptsRanges` (the owner's Subscribed
 * said accepts_ack_ranges) its single positions travel as ranges where they
 * are consecutive; without it, as they are. A command is kept with single
 * positions and encoded per stream, because an owner that predates ranges
 * skips the field and would confirm the Ack without applying them: a
 * command sent again on a stream to such an owner (a rolling upgrade moved
 * the topic) must carry positions.
 */
export function ackForStream(ack: AckInit, acceptsRanges: boolean): AckInit {
  // PartitionAcks builds its commands as plain init objects; a built message would be sent as it is.
  if (!acceptsRanges || '$typeName' in ack) return ack;
  const positions = ack.positions as readonly Position[] | undefined;
  if (positions === undefined || positions.length < 2) return ack;
  const coalesced = coalescePositions(positions);
  if (coalesced.ranges.length === 0) return ack;
  return { ...ack, positions: coalesced.positions, ranges: coalesced.ranges };
}
