import { KafkaProtocolReason, protocolError } from './protocol-error.js';

/** Default bound on one frame (Kafka's socket.request.max.bytes default is 100 MiB; ours is smaller on purpose). */
export const DEFAULT_MAX_FRAME_SIZE_BYTES = 16 * 1024 * 1024;
/** The smallest request: api key, api version and correlation id. */
export const MIN_REQUEST_FRAME_BYTES = 8;

/**
 * Splits a byte stream into Kafka frames (a 4-byte big-endian size, then
 * that many bytes). A size above `maxFrameSizeBytes` or below the smallest
 * header fails before anything is buffered for it, so a client cannot make the
 * decoder hold more than one bounded frame.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(private readonly maxFrameSizeBytes = DEFAULT_MAX_FRAME_SIZE_BYTES) {}

  /** Bytes held that are not yet a whole frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Adds bytes and returns the frames they complete (without their size prefix). */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peekHead();
      const size = head.readInt32BE(0);
      if (size < MIN_REQUEST_FRAME_BYTES || size > this.maxFrameSizeBytes) {
        throw protocolError(
          KafkaProtocolReason.KAFKA_FRAME_TOO_LARGE,
          `frame size ${size} is outside [${MIN_REQUEST_FRAME_BYTES}, ${this.maxFrameSizeBytes}] (maxFrameSizeBytes)`,
        );
      }
      if (this.buffered < 4 + size) break;
      const all = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
      frames.push(all.subarray(4, 4 + size));
      const rest = all.subarray(4 + size);
      this.chunks = rest.length === 0 ? [] : [rest];
      this.buffered = rest.length;
    }
    return frames;
  }

  private peekHead(): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= 4) return first;
    const joined = Buffer.concat(this.chunks, this.buffered);
    this.chunks = [joined];
    return joined;
  }
}

/** Prefixes a frame body with its size. */
export function frame(body: Buffer): Buffer {
  const head = Buffer.allocUnsafe(4);
  head.writeInt32BE(body.length, 0);
  return Buffer.concat([head, body]);
}
