import { eachAtMost } from './each-at-most.js';

describe('eachAtMost', () => {
  it('runs every item once, in order, never more than the bound at once', async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    await eachAtMost([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      started.push(item);
      most = Math.max(most, ++running);
      await new Promise((resolve) => setImmediate(resolve));
      running--;
    });
    expect(started).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
  });

  it('takes a bound below one as one, and resolves at once for no items', async () => {
    let most = 0;
    let running = 0;
    await eachAtMost([1, 2], 0, async () => {
      most = Math.max(most, ++running);
      await Promise.resolve();
      running--;
    });
    expect(most).toBe(1);
    await expect(eachAtMost([], 4, async () => undefined)).resolves.toBeUndefined();
  });
});
