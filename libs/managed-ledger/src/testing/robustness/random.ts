/**
 * A seeded generator (mulberry32), so a failing history is replayed by its
 * seed: set LEDGERLINE_ROBUSTNESS_SEED to run one seed, and
 * LEDGERLINE_ROBUSTNESS_RUNS to run more seeds than the default.
 */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[this.int(0, items.length - 1)] as T;
  }

  /** One of the keys, with probability proportional to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [key, weight] of entries) {
      roll -= weight;
      if (roll < 0) return key;
    }
    return entries[entries.length - 1]![0];
  }

  /** A random subset, each item kept with `probability`. */
  subset<T>(items: readonly T[], probability: number): T[] {
    return items.filter(() => this.chance(probability));
  }
}

/** The seeds a spec runs: one from the environment, else `runs` seeds from `base`. */
export function seedsToRun(base: number, runs: number): number[] {
  const one = process.env['LEDGERLINE_ROBUSTNESS_SEED'];
  if (one !== undefined && one !== '') return [Number(one)];
  const override = Number(process.env['LEDGERLINE_ROBUSTNESS_RUNS'] ?? '');
  const count = Number.isSafeInteger(override) && override > 0 ? Math.min(override, 10_000) : runs;
  return Array.from({ length: count }, (_, i) => base + i);
}
