import { runBoundedByTarget } from './move-schedule.js';

/** A move whose completion the test decides, recording what ran at once. */
function gatedRuns() {
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  const running = new Map<string, number>();
  let mostInAll = 0;
  let inAll = 0;
  const mostInto = new Map<string, number>();
  const run = async (move: { id: string; to: string }) => {
    started.push(move.id);
    inAll++;
    mostInAll = Math.max(mostInAll, inAll);
    running.set(move.to, (running.get(move.to) ?? 0) + 1);
    mostInto.set(move.to, Math.max(mostInto.get(move.to) ?? 0, running.get(move.to)!));
    await new Promise<void>((resolve) => gates.set(move.id, resolve));
    inAll--;
    running.set(move.to, running.get(move.to)! - 1);
    return `${move.id} done`;
  };
  const finish = async (id: string) => {
    gates.get(id)!();
    gates.delete(id);
    // Lets the finished run's continuation start the next ones.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { run, finish, started, mostInto, gates, mostInAll: () => mostInAll };
}

const moves = (targets: string[]) => targets.map((to, index) => ({ id: `m${index}`, to }));

describe('runBoundedByTarget', () => {
  it('keeps to the bound per target and the bound in all, in the order given where they allow', async () => {
    const planned = moves(['a', 'a', 'a', 'a', 'b', 'b', 'c']);
    const runs = gatedRuns();
    const done = runBoundedByTarget(planned, (move) => move.to, { concurrency: 4, perTarget: 2 }, runs.run);
    await new Promise((resolve) => setImmediate(resolve));
    // The third and fourth into a wait for the first two; b's are next in order.
    expect(runs.started).toEqual(['m0', 'm1', 'm4', 'm5']);
    await runs.finish('m0');
    expect(runs.started).toEqual(['m0', 'm1', 'm4', 'm5', 'm2']);
    await runs.finish('m4');
    // a is full again (m1 and m2): the slot goes to c.
    expect(runs.started.at(-1)).toBe('m6');
    while (runs.gates.size > 0) await runs.finish([...runs.gates.keys()][0]!);
    await expect(done).resolves.toEqual(planned.map((move) => `${move.id} done`));
    expect(runs.mostInAll()).toBe(4);
    expect(Math.max(...runs.mostInto.values())).toBe(2);
  });

  it('runs nothing and resolves at once with no moves', async () => {
    await expect(
      runBoundedByTarget(
        [],
        () => 'a',
        { concurrency: 2, perTarget: 1 },
        async () => 1,
      ),
    ).resolves.toEqual([]);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    const planned = moves(['a', 'a', 'a']);
    const started: string[] = [];
    const failing = runBoundedByTarget(
      planned,
      (move) => move.to,
      { concurrency: 4, perTarget: 1 },
      async (move) => {
        started.push(move.id);
        throw new Error(`${move.id} failed`);
      },
    );
    await expect(failing).rejects.toThrow('m0 failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['m0']);
  });
});
