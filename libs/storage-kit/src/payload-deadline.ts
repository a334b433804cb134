import type { Cluster, Command, Redis } from 'ioredis';

/**
 * The slowest rate at which we still expect Redis to take in a command's
 * arguments, run it and answer (1 MiB/s: a busy node on a slow link). A
 * command's deadline grows by its size at this rate, so a 64 MiB append gets
 * 64 s more than commandTimeoutMs instead of timing out on a flat 5 s bound
 * while Redis is still reading it.
 */
export const MIN_PAYLOAD_BYTES_PER_SECOND = 1_048_576;
/** Commands with fewer argument bytes than this keep the flat commandTimeoutMs. */
export const PAYLOAD_DEADLINE_THRESHOLD_BYTES = 65_536;

/** Extra milliseconds a command of this many argument bytes may take beyond commandTimeoutMs. */
export function payloadAllowanceMs(bytes: number): number {
  return bytes < PAYLOAD_DEADLINE_THRESHOLD_BYTES ? 0 : Math.ceil((bytes * 1000) / MIN_PAYLOAD_BYTES_PER_SECOND);
}

/** The bytes a command's arguments put on the wire (strings counted by their UTF-8 length). */
export function argumentBytes(args: readonly unknown[]): number {
  let bytes = 0;
  for (const argument of args) {
    if (typeof argument === 'string') bytes += Buffer.byteLength(argument);
    else if (argument instanceof Uint8Array) bytes += argument.byteLength;
  }
  return bytes;
}

/**
 * Gives each large command a deadline that grows with its size. ioredis keeps
 * the first timeout set on a command, and sets commandTimeoutMs only when the
 * command reaches a node's connection; setting ours here, where every command
 * of this client (scripts included, and their EVAL fallback) passes first,
 * makes it win. Small commands are untouched.
 */
export function scalePayloadDeadlines(client: Pick<Redis | Cluster, 'sendCommand'>, commandTimeoutMs: number): void {
  // A Cluster's sendCommand takes more arguments than a Redis's (the node it routes to): pass them all on.
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  const scaled = (command: Command, ...rest: unknown[]): unknown => {
    const allowanceMs = payloadAllowanceMs(argumentBytes(command.args));
    if (allowanceMs > 0) command.setTimeout(commandTimeoutMs + allowanceMs);
    return send(command, ...rest);
  };
  (client as unknown as { sendCommand: typeof scaled }).sendCommand = scaled;
}
