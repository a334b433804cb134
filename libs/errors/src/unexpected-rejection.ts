/**
 * The rejection handler for work started in the background (`task().catch(unexpectedRejection)`)
 * whose code already turns every failure it expects into a result, a retry or
 * a log line. A rejection that still arrives is a bug, and a bug fails loudly:
 * it is thrown again outside the promise chain, where it is an uncaught
 * exception that ends the process, as an unhandled rejection would, but
 * stated at the call site instead of left to chance.
 */
export function unexpectedRejection(thrown: unknown): void {
  setImmediate(() => {
    throw thrown;
  });
}
