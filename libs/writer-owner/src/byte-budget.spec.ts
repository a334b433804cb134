import { ByteBudget } from './byte-budget.js';

describe('ByteBudget', () => {
  it('lets waiters through in order, never a small one past a large one, and a lone oversized item alone', async () => {
    const budget = new ByteBudget(100);
    expect(budget.acquire(80)).toBeUndefined();
    const order: string[] = [];
    const large = budget.acquire(50)!.then(() => order.push('large'));
    const small = budget.acquire(10)!.then(() => order.push('small'));
    expect(budget.usedBytes).toBe(80);
    budget.release(80);
    await Promise.all([large, small]);
    expect(order).toEqual(['large', 'small']);
    budget.release(60);
    expect(budget.acquire(500)).toBeUndefined();
    expect(budget.usedBytes).toBe(500);
  });

  it('drops an aborted waiter from the line', async () => {
    const budget = new ByteBudget(10);
    budget.acquire(10);
    const controller = new AbortController();
    const waiting = budget.acquire(5, controller.signal)!;
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    budget.release(10);
    expect(budget.usedBytes).toBe(0);
  });
});
