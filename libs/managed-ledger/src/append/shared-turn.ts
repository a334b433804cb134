/**
 * The next turn of the event loop, shared by every append pipeline of the
 * process: one setImmediate however many pipelines wait, so the pipelines
 * that wait for the same turn (their group commit, before the first write
 * after an idle spell) resume in one callback and the store writes they issue
 * fall in one run of microtasks, not one callback each: what a store needs to
 * send the writes of every ready ledger together (step 4.4 of
 * docs/data-path.md).
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
