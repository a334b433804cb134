import type { Readable, Writable } from 'node:stream';
import { LedgerlineError } from '@ledgerline/errors';
import type { DecodedRequest } from './service-definition.js';
import { RpcReason } from './errors.js';

/**
 * Resolves when a writable stream has room again, or when `stop` aborts (the
 * call ended or was cancelled), so a writer waiting on a dead call never hangs.
 */
export function drained(stream: Writable, stop: AbortSignal): Promise<void> {
  if (stop.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      stop.removeEventListener('abort', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
    stop.addEventListener('abort', done, { once: true });
  });
}

/**
 * Writes every message of `messages` to `stream`, honouring backpressure: the
 * producer is not asked for the next message until the stream has room, so a
 * slow peer bounds the memory a stream uses. Stops early once `stop` aborts.
 */
export async function writeAll(stream: Writable, messages: AsyncIterable<unknown>, stop: AbortSignal): Promise<void> {
  for await (const message of messages) {
    if (stop.aborted) return;
    if (!stream.write(message)) await drained(stream, stop);
  }
}

/**
 * The requests of a client- or bidi-streaming call as an async iterable of
 * messages. The inbound stream buffers at most its highWaterMark (16 messages)
 * and grpc-js reads from the socket only when asked, so a slow handler pushes
 * back on the client. A malformed request ends the iteration with
 * INVALID_ARGUMENT; a cancelled call ends it with CANCELLED. Leaving the loop
 * early does not destroy the stream, which still carries the responses.
 *
 * It reads with `read()` and the 'readable'/'end'/'close' events rather than
 * `stream.iterator()`: that iterator destroys the stream on an 'error' event,
 * and grpc-js's way to end a call with a status is an 'error' emitted on it, so
 * a handler failing while a response was still being written lost the status
 * (the write dropped, `_final` never ran) and the client's stream hung open.
 */
export async function* readRequests(
  stream: Readable,
  cancelled: AbortSignal,
): AsyncGenerator<unknown, void, undefined> {
  for (;;) {
    const next = stream.read() as DecodedRequest | null;
    if (next !== null) {
      if (!next.ok) throw next.error;
      yield next.message;
      continue;
    }
    if (stream.readableEnded) return;
    if (cancelled.aborted || stream.destroyed) {
      throw new LedgerlineError('CANCELLED', RpcReason.CANCELLED, 'the call was cancelled');
    }
    await readableOrEnded(stream, cancelled);
  }
}

/** Resolves once the stream has a message, ended, closed, or the call was cancelled. */
function readableOrEnded(stream: Readable, cancelled: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('readable', done);
      stream.off('end', done);
      stream.off('close', done);
      cancelled.removeEventListener('abort', done);
      resolve();
    };
    stream.on('readable', done);
    stream.on('end', done);
    stream.on('close', done);
    cancelled.addEventListener('abort', done, { once: true });
  });
}
