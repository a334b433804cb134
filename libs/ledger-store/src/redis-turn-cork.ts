import { Cluster } from 'ioredis';
import type { RedisClient } from '@ledgerline/storage-kit';

/**
 * Bytes the sockets may hold back before they are sent at once: past this a
 * write system call costs little next to the bytes it carries, so holding
 * more would only delay appends (and hold their bytes). Large appends (a busy
 * single topic writes hundreds of KiB at a time) therefore go as they come;
 * small ones (many topics, each writing a few entries) share a write.
 */
export const MAX_CORKED_BYTES = 64 * 1024;

interface Corkable {
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
}

/**
 * Holds a Redis client's sockets corked from the first append issued in one
 * run of the event loop's work (a callback and the microtasks it queues) to
 * the end of that run, so the appends of every managed ledger that wrote in it
 * leave in one socket write (a writev) per Redis node, where each append was
 * its own system call.
 *
 * The commands are still sent one by one through ioredis, so each keeps its
 * own reply, deadline and failure, and their order on the connection is the
 * order they were issued (the call-number check relies on it). ioredis'
 * autoPipelining would also batch these commands, but it keeps one pipeline
 * in flight per node and queues the next one behind it, so a store write
 * would wait for the previous round trip of another ledger.
 *
 * The sockets are uncorked from process.nextTick, which runs once the
 * current callback and every microtask it queued are done: no append waits
 * for another turn of the event loop. The managed ledgers resume from one
 * shared setImmediate (their group-commit turn), so the writes of all of them
 * are issued in one such run and share the cork.
 */
export class TurnCork {
  private corked: Corkable[] | undefined;

  constructor(private readonly client: RedisClient) {}

  /**
   * Runs `send` (which writes commands through the client) with the sockets
   * corked until the current run of callbacks and microtasks ends, or sent at
   * once when they hold MAX_CORKED_BYTES or more.
   */
  send<T>(send: () => T): T {
    if (this.corked === undefined) {
      const sockets = this.sockets();
      for (const socket of sockets) socket.cork();
      this.corked = sockets;
      process.nextTick(this.release);
    }
    try {
      return send();
    } finally {
      if (this.corkedBytes() >= MAX_CORKED_BYTES) this.release();
    }
  }

  /** Sends what the sockets hold; idempotent within a turn. */
  readonly release = (): void => {
    const sockets = this.corked;
    if (sockets === undefined) return;
    this.corked = undefined;
    // Each socket was corked once by hold(); one that closed and was replaced meanwhile has nothing to send.
    for (const socket of sockets) if (isCorked(socket)) socket.uncork();
  };

  private corkedBytes(): number {
    let bytes = 0;
    for (const socket of this.corked ?? []) bytes += socket.writableLength;
    return bytes;
  }

  /** The sockets commands go out on: the client's, or each Cluster master's that is connected. */
  private sockets(): Corkable[] {
    const clients = this.client instanceof Cluster ? this.client.nodes('master') : [this.client];
    const sockets: Corkable[] = [];
    for (const node of clients) {
      const stream = (node as { stream?: Corkable }).stream;
      if (stream !== undefined && typeof stream.cork === 'function') sockets.push(stream);
    }
    return sockets;
  }
}

function isCorked(socket: Corkable): boolean {
  return ((socket as { writableCorked?: number }).writableCorked ?? 0) > 0;
}
