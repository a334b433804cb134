import { Cluster } from 'ioredis';
import type { RedisClient } from '@ledgerline/storage-kit';

/**
 * Bytes the sockets may hold back before they are sent at once, mid-turn:
 * past this a write system call costs little next to the bytes it carries, so
 * holding more would only delay appends (and hold their bytes) to the end of
 * the turn. A turn of large appends (a busy single topic writes hundreds of
 * KiB at a time) therefore sends as it goes; small ones (many topics) share.
 */
export const MAX_CORKED_BYTES = 64 * 1024;

interface Corkable {
  cork(): void;
  uncork(): void;
  readonly writableLength: number;
}

/**
 * Holds a Redis client's sockets corked from the first append of a turn of the
 * event loop to the end of that turn, so the appends of every managed ledger
 * that wrote in the turn leave in one socket write (a writev) per Redis node,
 * where each append was its own system call.
 *
 * The commands are still sent one by one through ioredis, so each keeps its
 * own reply, deadline and failure, and their order on the connection is the
 * order they were issued (the call-number check relies on it). ioredis'
 * autoPipelining would also batch a turn's commands, but it keeps one pipeline
 * in flight per node and queues the next turn's behind it, so a store write
 * would wait for the previous round trip of another ledger.
 *
 * The managed ledgers issue their writes from setImmediate callbacks (their
 * group-commit turn), so the sockets are uncorked from a setImmediate too,
 * which runs after every callback of the current check phase.
 */
export class TurnCork {
  private corked: Corkable[] | undefined;

  constructor(private readonly client: RedisClient) {}

  /**
   * Runs `send` (which writes commands through the client) with the sockets
   * corked until the end of the turn, or sent at once when they hold
   * MAX_CORKED_BYTES or more.
   */
  send<T>(send: () => T): T {
    if (this.corked === undefined) {
      const sockets = this.sockets();
      for (const socket of sockets) socket.cork();
      this.corked = sockets;
      setImmediate(this.release);
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
