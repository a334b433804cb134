// Bit tricks over 32-bit words, used by the bitmap containers and the
// long-array codec. Every function treats its argument as an unsigned word.

/** Number of set bits in a 32-bit word. */
export function popcount32(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
export function lowestBit32(word: number): number {
  return 31 - Math.clz32(word & -word);
}

/** A mask with bits [from, to] set inside one 32-bit word (0 <= from <= to <= 31). */
export function rangeMask32(from: number, to: number): number {
  const upper = to === 31 ? 0xffffffff : (1 << (to + 1)) - 1;
  return (upper & ~((1 << from) - 1)) >>> 0;
}

/**
 * Number of run starts in a word: bits that are set while the bit just below
 * them is clear. `carryIn` is the top bit of the previous word (0 or 1).
 */
export function runStarts32(word: number, carryIn: number): number {
  return popcount32((word & ~((word << 1) | carryIn)) >>> 0);
}
