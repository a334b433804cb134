/** A Buffer over the same memory as `bytes` (no copy), for drivers that want Buffers. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A plain Uint8Array over the same memory as `buffer` (no copy), so callers never depend on Buffer. */
export function asBytes(buffer: Buffer): Uint8Array {
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}
