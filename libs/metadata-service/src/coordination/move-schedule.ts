/** How many of a round's moves run at once: in all, and into any one owner. */
export interface MoveBounds {
  concurrency: number;
  perTarget: number;
}

/**
 * Runs `moves` with at most `bounds.concurrency` at once and at most
 * `bounds.perTarget` into one target at once, in the order given wherever the
 * bounds allow. Why the second bound: an owner that just joined is sent every
 * topic placement now gives it in one round, and loading a score of topics at
 * once on one cold process stretched each topic's pause to the time of all of
 * them (a rolling restart of 6 owners with 120 busy topics: joins into the new
 * owner paused their topics 670 to 710 ms, against 200 for a drain's). Rejects
 * with the first error `run` throws, and starts nothing after it.
 */
export function runBoundedByTarget<M, R>(
  moves: readonly M[],
  targetOf: (move: M) => string,
  bounds: MoveBounds,
  run: (move: M) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(moves.length);
  // Each move's target once: a waiting move is looked at again every time another finishes.
  const targets = moves.map(targetOf);
  const waiting = moves.map((_, index) => index);
  const intoTarget = new Map<string, number>();
  let running = 0;
  let failed = false;
  return new Promise<R[]>((resolve, reject) => {
    const pump = (): void => {
      if (failed) return;
      if (waiting.length === 0 && running === 0) {
        resolve(results);
        return;
      }
      for (let at = 0; at < waiting.length && running < bounds.concurrency;) {
        const index = waiting[at]!;
        const target = targets[index]!;
        const into = intoTarget.get(target) ?? 0;
        if (into >= bounds.perTarget) {
          at++;
          continue;
        }
        waiting.splice(at, 1);
        intoTarget.set(target, into + 1);
        running++;
        Promise.resolve()
          .then(() => run(moves[index]!))
          .then(
            (result) => {
              results[index] = result;
              running--;
              intoTarget.set(target, intoTarget.get(target)! - 1);
              pump();
            },
            (error: unknown) => {
              failed = true;
              reject(error);
            },
          );
      }
    };
    pump();
  });
}
