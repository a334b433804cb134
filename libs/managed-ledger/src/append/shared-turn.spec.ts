import { sharedNextTurn } from './shared-turn.js';

it('resumes every pipeline waiting for the next turn in one callback, before work queued after the first wait', async () => {
  const order: string[] = [];
  const first = sharedNextTurn();
  const other = new Promise<void>((resolve) =>
    setImmediate(() => {
      order.push('other');
      resolve();
    }),
  );
  const second = sharedNextTurn();
  expect(second).toBe(first);
  await Promise.all([first.then(() => order.push('first')), second.then(() => order.push('second')), other]);
  // Separate immediates would have let the other callback run between the two.
  expect(order).toEqual(['first', 'second', 'other']);
  expect(sharedNextTurn()).not.toBe(first);
});
