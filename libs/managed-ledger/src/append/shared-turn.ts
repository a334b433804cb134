/**
 * The next turn of the event loop, shared by every append pipeline of the
 * process: one setImmediate however many pipelines wait, so the pipelines
 * that wait for the same turn (their group commit) resume in one callback and
 * the store writes they issue fall in one run of microtasks. A store can then
 * send them together (the Redis ledger store corks its sockets until that run
 * ends) instead of each pipeline writing from a callback of its own.
 */
let nextTurn: Promise<void> | undefined;

export function sharedNextTurn(): Promise<void> {
  nextTurn ??= new Promise<void>((resolve) =>
    setImmediate(() => {
      nextTurn = undefined;
      resolve();
    }),
  );
  return nextTurn;
}
