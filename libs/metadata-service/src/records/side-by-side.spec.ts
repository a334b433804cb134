import { firstThenFresh, sideBySide } from './side-by-side.js';

describe('sideBySide', () => {
  it('answers every value in the order the steps were given', async () => {
    const late = new Promise<string>((resolve) => setImmediate(() => resolve('late')));
    await expect(sideBySide(late, Promise.resolve(2))).resolves.toEqual(['late', 2]);
  });

  it('fails with the first step that failed in the order given, not the first to fail in time', async () => {
    const first = new Promise<never>((_, reject) => setImmediate(() => reject(new Error('the session is gone'))));
    const second = Promise.reject(new Error('the topic does not exist'));
    await expect(sideBySide(first, second)).rejects.toThrow('the session is gone');
  });

  it('waits for every step before it fails, so none is left running unobserved', async () => {
    let finished = false;
    const slow = new Promise<void>((resolve) =>
      setImmediate(() => {
        finished = true;
        resolve();
      }),
    );
    await expect(sideBySide(Promise.reject(new Error('refused')), slow)).rejects.toThrow('refused');
    expect(finished).toBe(true);
  });
});

describe('firstThenFresh', () => {
  it('answers the value read beside the checks once, then reads afresh for each retry', async () => {
    let reads = 0;
    const read = firstThenFresh('read beside the checks', async () => `fresh read ${++reads}`);
    expect(await read()).toBe('read beside the checks');
    expect(await read()).toBe('fresh read 1');
    expect(await read()).toBe('fresh read 2');
  });

  it('keeps an absent first value (a topic nobody leased yet) rather than reading again', async () => {
    const fresh = jest.fn(async () => 'fresh');
    const read = firstThenFresh<string | undefined>(undefined, fresh);
    expect(await read()).toBeUndefined();
    expect(fresh).not.toHaveBeenCalled();
  });
});
