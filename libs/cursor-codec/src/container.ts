// A ledger's entry ids are split into regions of 2^16 entries (as in Roaring
// bitmaps). Each region that holds some but not all acknowledged entries has
// one container: a run list while runs are few, a 65536-bit bitmap once runs
// would cost more than the bitmap. Regions that are fully acknowledged are not
// stored one by one: the ledger keeps them as spans, so memory follows the
// number of holes, never the backlog span.

export const REGION_BITS = 16;
export const REGION_SIZE = 1 << REGION_BITS;
export const LAST_OFFSET = REGION_SIZE - 1;
/** 32-bit words in a bitmap container. */
export const BITMAP_WORDS = REGION_SIZE / 32;
/** A run list above this many runs is larger than a bitmap (4 bytes a run, 8 KiB a bitmap). */
export const MAX_RUNS_IN_RUN_CONTAINER = 2048;
/** A bitmap falls back to a run list below this many runs (half the limit, so a region does not flap). */
export const MIN_RUNS_IN_BITMAP_CONTAINER = 1024;

import type { RunList } from './word-runs.js';

/** The acknowledged offsets of one region. Offsets are in [0, REGION_SIZE). */
export interface Container {
  readonly kind: 'runs' | 'bitmap';
  /** Number of acknowledged offsets. */
  readonly cardinality: number;
  /** Number of maximal runs of acknowledged offsets inside the region. */
  readonly runCount: number;
  has(offset: number): boolean;
  /** Returns true when the offset was not acknowledged before. */
  add(offset: number): boolean;
  /** Adds [first, last]; returns how many offsets were new. */
  addRange(first: number, last: number): number;
  /** Removes every offset <= `offset`; returns how many were removed. */
  removeUpTo(offset: number): number;
  /** Appends the runs, offset by base, to the list in ascending order. */
  collectRuns(base: number, list: RunList): void;
  firstOffset(): number;
  lastOffset(): number;
  /** Writes the region as BITMAP_WORDS words (bit i of word w = offset 32w + i). */
  writeWords(target: Uint32Array): void;
  clone(): Container;
  /** Approximate bytes this container holds, for memory reports. */
  memoryBytes(): number;
}
