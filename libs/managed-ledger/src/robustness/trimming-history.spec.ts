import { redisBackend, sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { seedsToRun } from '../testing/robustness/random.js';
import { traced } from '../testing/robustness/report.js';
import { TrimmingHistory } from '../testing/robustness/trimming-history.js';

/**
 * Random trims with cursors at random positions: nothing a live cursor has
 * not consumed is ever marked deletable, the ledger being written never is,
 * retention is honoured, and nothing leaks. A failure names its seed: rerun
 * it with LEDGERLINE_ROBUSTNESS_SEED=<seed>.
 */
describe('trimming histories on the embedded SQLite stores', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(5_000, 10))(
    'seed %i marks deletable only what every cursor consumed',
    async (seed) => {
      const history = new TrimmingHistory(backend, `persistent://acme/robust/trims-${seed}`, seed);
      expect(await traced(backend, () => history.run(60))).toEqual([]);
    },
    60_000,
  );
});

describe('trimming histories on Redis', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await redisBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(5_500, 1))(
    'seed %i marks deletable only what every cursor consumed',
    async (seed) => {
      const history = new TrimmingHistory(backend, `persistent://acme/robust/trims-${seed}`, seed);
      expect(await traced(backend, () => history.run(40))).toEqual([]);
    },
    60_000,
  );
});
