import { AppendHistory } from '../testing/robustness/append-history.js';
import { redisBackend, sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { seedsToRun } from '../testing/robustness/random.js';
import { traced } from '../testing/robustness/report.js';

/**
 * Random histories of pipelined appends with store failures, lost replies,
 * rollovers, takeovers and crashes, checked against what clients saw
 * (nothing acknowledged lost or moved, nothing failed for certain stored,
 * offsets contiguous, nothing leaked). A failure names its seed: rerun it
 * with LEDGERLINE_ROBUSTNESS_SEED=<seed>.
 */
describe('append histories on the embedded SQLite stores', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(1_000, 12))(
    'seed %i keeps every acknowledged append and leaks nothing',
    async (seed) => {
      const history = new AppendHistory(backend, `persistent://acme/robust/appends-${seed}`, seed);
      expect(await traced(backend, () => history.run(40))).toEqual([]);
    },
    60_000,
  );
});

describe('append histories on Redis', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await redisBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(2_000, 2))(
    'seed %i keeps every acknowledged append and leaks nothing',
    async (seed) => {
      const history = new AppendHistory(backend, `persistent://acme/robust/appends-${seed}`, seed);
      expect(await traced(backend, () => history.run(30))).toEqual([]);
    },
    60_000,
  );
});
