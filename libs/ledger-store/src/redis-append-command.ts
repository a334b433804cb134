import { createHash } from 'node:crypto';
import { Command } from 'ioredis';

/** An append script as the append command sends it: its source, its digest and its number of keys. */
export class AppendScript {
  readonly sha: string;
  /** The connections (sockets) that have run the script once, so that EVALSHA finds it there. */
  private readonly loadedOn = new WeakSet<object>();

  constructor(
    readonly lua: string,
    readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Whether `socket` knows the script; it will from the next command on. */
  takeLoaded(socket: object): boolean {
    const loaded = this.loadedOn.has(socket);
    this.loadedOn.add(socket);
    return loaded;
  }

  /** `socket` answered NOSCRIPT (its Redis restarted or flushed its scripts): the next command sends the source. */
  forget(socket: object): void {
    this.loadedOn.delete(socket);
  }
}

/** What the command writes to: a connection's socket. */
interface Socket {
  write(chunk: string | Uint8Array): boolean;
  cork(): void;
  uncork(): void;
  readonly writableCorked: number;
}

/**
 * One append script call whose entries are written to the socket as they are:
 * no copy of them into one packed argument and none into one command buffer
 * (ioredis' `MixedBuffers.toBuffer` copies every Buffer argument of a command
 * into a fresh buffer). The socket is held corked while they are written, so
 * they leave in one writev with whatever else the turn sends.
 *
 * The entries must not change until the command is answered: a reconnecting
 * client writes an unanswered command again. Entries are framed once and
 * never written again, so they do not.
 *
 * Sent with `sendCommand` on a client or a Cluster, never inside a pipeline
 * or MULTI: those write a command's bytes into their own buffer, while this
 * one writes to the socket it is given. As ioredis' own scripts do, the first
 * call on a connection sends the script's source (EVAL) and later ones its
 * digest (EVALSHA); a NOSCRIPT answer makes the caller send it again.
 */
export class AppendCommand extends Command {
  /** The socket the command was last written to, to forget the script on when it answers NOSCRIPT. */
  sentOn: object | undefined;

  /**
   * `argv` are the script's string arguments after its keys; `packed` sends
   * the entries back to back as one more argument, else each entry is one.
   */
  constructor(
    readonly script: AppendScript,
    keys: readonly string[],
    argv: readonly string[],
    readonly entries: readonly Uint8Array[],
    readonly packedBytes: number | undefined,
  ) {
    // Keys where ioredis looks for them (after the digest and the key count), for a Cluster's slot.
    super('evalsha', [script.sha, String(script.numberOfKeys), ...keys, ...argv], { replyEncoding: 'utf8' });
  }

  override toWritable(target: object): string {
    const socket = target as Socket;
    this.sentOn = target;
    const loaded = this.script.takeLoaded(target);
    const args = this.args as string[];
    const argumentCount = 1 + args.length + (this.packedBytes === undefined ? this.entries.length : 1);
    let head = `*${argumentCount}\r\n${loaded ? '$7\r\nevalsha\r\n' : '$4\r\neval\r\n'}`;
    head += bulkString(loaded ? this.script.sha : this.script.lua);
    for (let index = 1; index < args.length; index++) head += bulkString(args[index]!);
    // Corked unless the turn holds it corked already (a command queued while offline is written later).
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }
    if (this.packedBytes !== undefined) {
      socket.write(`${head}$${this.packedBytes}\r\n`);
      for (const entry of this.entries) socket.write(entry);
      return '\r\n';
    }
    let between = head;
    for (const entry of this.entries) {
      socket.write(`${between}$${entry.byteLength}\r\n`);
      socket.write(entry);
      between = '\r\n';
    }
    return this.entries.length === 0 ? head : '\r\n';
  }
}

function bulkString(value: string): string {
  return `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
}

/** Whether `error` is Redis saying it does not know a script's digest. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}
