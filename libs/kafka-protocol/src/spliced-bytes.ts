/** Chunks at least this long are spliced into the output; shorter ones cost less copied than as buffers of their own. */
export const MIN_SPLICED_CHUNK_BYTES = 4096;

/**
 * A bytes or records value given as the buffers that hold it, in order
 * (a Fetch answer's record batches, one buffer each): the encoder writes its
 * length and then splices the chunks into the output rather than copying
 * them (ByteWriter.splice), so `encodeResponseChunks` hands them to the
 * socket as they are. The chunks must not change until the answer is written.
 */
export class SplicedBytes {
  readonly length: number;

  constructor(readonly chunks: readonly Buffer[]) {
    this.length = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  }
}
