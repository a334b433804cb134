/**
 * What a compressed payload may expand to, read from its own headers before
 * any byte is inflated, so a small batch cannot make the decoder allocate
 * without bound. Each function returns an upper bound or throws a message.
 */

/** The xerial framing Java clients write: 8-byte magic, version, compatible version, then size-prefixed chunks. */
export const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
export const XERIAL_HEADER_BYTES = 16;

/** The uncompressed length a raw snappy block starts with (a little-endian base-128 varint). */
export function snappyRawLength(block: Uint8Array): number {
  let length = 0;
  for (let index = 0; index < 5; index++) {
    if (index >= block.length) throw new Error('snappy block ends inside its length');
    const byte = block[index]!;
    length += (byte & 0x7f) * 2 ** (7 * index);
    if ((byte & 0x80) === 0) return length;
  }
  throw new Error('snappy length is longer than 5 bytes');
}

export function isXerial(bytes: Buffer): boolean {
  return bytes.length >= XERIAL_HEADER_BYTES && bytes.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

/** The raw snappy chunks of a xerial-framed payload, each checked to lie inside it. */
export function xerialChunks(bytes: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  let offset = XERIAL_HEADER_BYTES;
  while (offset < bytes.length) {
    if (offset + 4 > bytes.length) throw new Error(`xerial chunk size cut at byte ${offset}`);
    const size = bytes.readUInt32BE(offset);
    offset += 4;
    if (size > bytes.length - offset)
      throw new Error(`xerial chunk of ${size} bytes with ${bytes.length - offset} left`);
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

const LZ4_FRAME_MAGIC = 0x184d2204;
/** Block maximum sizes by the frame descriptor's BD byte (bits 4-6): 4 → 64 KiB .. 7 → 4 MiB. */
const LZ4_BLOCK_MAX: Record<number, number> = { 4: 1 << 16, 5: 1 << 18, 6: 1 << 20, 7: 1 << 22 };

/**
 * Upper bound of an LZ4 frame's content: blocks × the frame's block maximum,
 * walking the block sizes (the LZ4 frame format, as Kafka uses since KIP-57).
 */
export function lz4FrameBound(bytes: Buffer): number {
  if (bytes.length < 7 || bytes.readUInt32LE(0) !== LZ4_FRAME_MAGIC) throw new Error('not an LZ4 frame');
  const flags = bytes[4]!;
  const blockMax = LZ4_BLOCK_MAX[(bytes[5]! >> 4) & 0x07];
  if (blockMax === undefined) throw new Error(`LZ4 block size code ${(bytes[5]! >> 4) & 0x07}`);
  const blockChecksum = (flags & 0x10) !== 0;
  let offset = 6 + ((flags & 0x08) !== 0 ? 8 : 0) + ((flags & 0x01) !== 0 ? 4 : 0) + 1;
  let blocks = 0;
  for (;;) {
    if (offset + 4 > bytes.length) throw new Error('LZ4 frame ends before its end mark');
    const size = bytes.readUInt32LE(offset) & 0x7fffffff;
    offset += 4;
    if (size === 0) return blocks * blockMax;
    if (size > blockMax) throw new Error(`LZ4 block of ${size} bytes in a frame of ${blockMax}-byte blocks`);
    offset += size + (blockChecksum ? 4 : 0);
    blocks++;
  }
}
