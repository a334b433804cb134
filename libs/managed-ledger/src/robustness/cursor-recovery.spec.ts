import { redisBackend, sqliteBackend, type RobustnessBackend } from '../testing/robustness/backend.js';
import { CursorHistory, tornSnapshotHistory } from '../testing/robustness/cursor-history.js';
import { Random, seedsToRun } from '../testing/robustness/random.js';
import { traced } from '../testing/robustness/report.js';

/**
 * Random acknowledgements with failing and torn snapshot writes, restarts,
 * crashes and takeovers: a recovered cursor never consumes what no client
 * acknowledged, never loses what a flush made durable, and its backlog is
 * exact. A failure names its seed: rerun it with LEDGERLINE_ROBUSTNESS_SEED.
 */
describe('cursor histories on the embedded SQLite stores', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(3_000, 8))(
    'seed %i recovers cursors that redeliver but never lose',
    async (seed) => {
      const history = new CursorHistory(backend, `persistent://acme/robust/cursors-${seed}`, seed);
      expect(await traced(backend, () => history.run(40))).toEqual([]);
    },
    60_000,
  );
});

describe('cursor histories on Redis', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await redisBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it.each(seedsToRun(3_500, 1))(
    'seed %i recovers cursors that redeliver but never lose',
    async (seed) => {
      const history = new CursorHistory(backend, `persistent://acme/robust/cursors-${seed}`, seed);
      expect(await traced(backend, () => history.run(30))).toEqual([]);
    },
    60_000,
  );
});

describe('a crash part way through a chunked snapshot', () => {
  let backend: RobustnessBackend;
  beforeAll(async () => {
    backend = await sqliteBackend();
  });
  afterAll(async () => {
    await backend.dispose();
  });

  it('recovers the previous complete snapshot for every number of chunks written', async () => {
    expect(await traced(backend, () => tornSnapshotHistory(backend, new Random(4_000)))).toEqual([]);
  }, 60_000);
});
