import { nextTurn, overTurnBudget, TURN_BUDGET_MS } from './turn-budget.js';

/** Holds the thread for `ms`, as data-path work does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it('says a stretch of work is over once it ran past the budget, and starts a new one after the next turn', async () => {
  // Whatever stretch was under way ends with this turn; from here the clock is the spec's.
  await nextTurn();
  expect(overTurnBudget(1_000)).toBe(false);
  expect(overTurnBudget(1_000 + TURN_BUDGET_MS / 2)).toBe(false);
  expect(overTurnBudget(1_000 + TURN_BUDGET_MS)).toBe(false);
  expect(overTurnBudget(1_000 + TURN_BUDGET_MS + 0.5)).toBe(true);
  await nextTurn();
  expect(overTurnBudget(2_000)).toBe(false);
  expect(overTurnBudget(2_000 + TURN_BUDGET_MS + 0.5)).toBe(true);
  await nextTurn();
});

it('lets a timer that is due run between the slices of a long run of work, not after all of it', async () => {
  const slices = 60;
  let firedAfter: number | undefined;
  let done = 0;
  await nextTurn();
  setTimeout(() => (firedAfter = done), 0);
  for (; done < slices; done++) {
    busy(1);
    if (overTurnBudget()) await nextTurn();
  }
  // A keep-alive due meanwhile ran after a few milliseconds of the work, not after the whole of it.
  expect(firedAfter).toBeDefined();
  expect(firedAfter!).toBeLessThan(slices / 2);
});
