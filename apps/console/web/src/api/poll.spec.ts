import { pollAfterEach } from './poll';

describe('pollAfterEach', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A call that answers only when told to, counting how many run at once. */
  function slowCalls() {
    const seen = { started: 0, running: 0, most: 0 };
    const answers: (() => void)[] = [];
    const run = () =>
      new Promise<void>((resolve) => {
        seen.started++;
        seen.most = Math.max(seen.most, ++seen.running);
        answers.push(() => {
          seen.running--;
          resolve();
        });
      });
    return { seen, answers, run };
  }

  it('starts the next call only an interval after the last one answered, never two at once', async () => {
    const { seen, answers, run } = slowCalls();
    const stop = pollAfterEach(run, 1_000, () => false);
    await jest.advanceTimersByTimeAsync(10_000);
    // The first call has not answered: ten intervals passed and nothing more started.
    expect(seen).toEqual({ started: 1, running: 1, most: 1 });
    answers.shift()!();
    await jest.advanceTimersByTimeAsync(999);
    expect(seen.started).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(seen).toEqual({ started: 2, running: 1, most: 1 });
    stop();
    answers.shift()!();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(seen.started).toBe(2);
  });

  it('starts nothing while the page is hidden, and goes on once it shows', async () => {
    const { seen, answers, run } = slowCalls();
    let hidden = false;
    const stop = pollAfterEach(run, 1_000, () => hidden);
    hidden = true;
    answers.shift()!();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(seen.started).toBe(1);
    hidden = false;
    await jest.advanceTimersByTimeAsync(1_000);
    expect(seen.started).toBe(2);
    stop();
  });

  it('runs once without an interval', async () => {
    const { seen, answers, run } = slowCalls();
    pollAfterEach(run, undefined, () => false);
    answers.shift()!();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(seen.started).toBe(1);
  });
});
