import { getEventListeners } from 'node:events';
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
    expect(budget.acquire(10)).toBeUndefined();
    const controller = new AbortController();
    const waiting = budget.acquire(5, controller.signal)!;
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    budget.release(10);
    expect(budget.usedBytes).toBe(0);
  });

  it('leaves no abort listener behind on the signal once a waiter got its bytes', async () => {
    const budget = new ByteBudget(10);
    const controller = new AbortController();
    for (let i = 0; i < 50; i++) {
      expect(budget.acquire(10, controller.signal)).toBeUndefined();
      const waiting = budget.acquire(10, controller.signal)!;
      budget.release(10);
      await waiting;
      budget.release(10);
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
